// Bridge control for the API and the CLI (`bridges list|start|stop|forwards|add-forward|
// del-forward|subscriptions|add-subscription|del-subscription`). It acts on the node that answers:
// each node runs its own bridges. Without the bridge plugin loaded there is no bridge.

import type { BridgeInfo } from "../bridges/bridge.ts";
import type { BridgeSubscription } from "../bridges/bridge-conf.ts";
import { filterProblem } from "../bridges/bridge-conf.ts";
import type { Bridges } from "../bridges/bridges.ts";

export type { BridgeInfo, BridgeSubscription };

export type BridgeOutcome =
  | { ok: true; changed: boolean }
  | { ok: false; error: "not_found" | "bad_filter" | "bad_qos" | "not_mqtt" | "start_failed"; message: string };

const fail = (error: Exclude<BridgeOutcome, { ok: true }>["error"], message: string): BridgeOutcome => ({
  ok: false,
  error,
  message,
});

export class BridgeService {
  constructor(
    private readonly bridges: Bridges,
    private readonly pluginActive: () => boolean,
  ) {}

  list(): BridgeInfo[] {
    return this.pluginActive() ? this.bridges.list().map((b) => b.info()) : [];
  }

  get(name: string): BridgeInfo | undefined {
    return this.bridge(name)?.info();
  }

  /** `changed: false` when it was running already. */
  start(name: string): BridgeOutcome {
    const b = this.bridge(name);
    if (b === undefined) return notFound(name);
    try {
      return { ok: true, changed: b.start() };
    } catch (err) {
      return fail("start_failed", `bridge ${name} cannot start: ${(err as Error).message}`);
    }
  }

  /** `changed: false` when it was stopped already. */
  async stop(name: string): Promise<BridgeOutcome> {
    const b = this.bridge(name);
    return b === undefined ? notFound(name) : { ok: true, changed: await b.stop() };
  }

  forwards(name: string): string[] | undefined {
    return this.bridge(name)?.forwardFilters().slice();
  }

  addForward(name: string, filter: string): BridgeOutcome {
    const b = this.bridge(name);
    if (b === undefined) return notFound(name);
    const p = filterProblem(filter);
    return p === null ? { ok: true, changed: b.addForward(filter) } : fail("bad_filter", p);
  }

  delForward(name: string, filter: string): BridgeOutcome {
    const b = this.bridge(name);
    return b === undefined ? notFound(name) : { ok: true, changed: b.delForward(filter) };
  }

  subscriptions(name: string): BridgeSubscription[] | undefined {
    return this.bridge(name)?.subscriptions();
  }

  addSubscription(name: string, topic: string, qos: number): BridgeOutcome {
    const b = this.bridge(name);
    if (b === undefined) return notFound(name);
    if (b.cfg.kind !== "mqtt") return fail("not_mqtt", `bridge ${name} is an RPC bridge: it forwards only`);
    const p = filterProblem(topic);
    if (p !== null) return fail("bad_filter", p);
    if (qos !== 0 && qos !== 1 && qos !== 2) return fail("bad_qos", `qos must be 0, 1 or 2, got ${qos}`);
    return { ok: true, changed: b.addSubscription(topic, qos) };
  }

  delSubscription(name: string, topic: string): BridgeOutcome {
    const b = this.bridge(name);
    return b === undefined ? notFound(name) : { ok: true, changed: b.delSubscription(topic) };
  }

  private bridge(name: string) {
    return this.pluginActive() ? this.bridges.get(name) : undefined;
  }
}

function notFound(name: string): BridgeOutcome {
  return fail("not_found", `bridge ${name} not found`);
}
