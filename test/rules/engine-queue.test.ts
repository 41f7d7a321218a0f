// The rule engine's queue against a busy broker (in process, no sockets): every turn of the event
// loop evaluates the events queued before it, within its time budget (a burst of publishes per
// turn, as busy sockets bring, never overflows a queue that is drained by a fixed few hundred per
// turn), QoS 1/2 publishes that find the queue over its high watermark have their acknowledgements
// held (broker.congested) until it drained, and a publish that finds it full runs its oldest
// events (a flood within one turn loses nothing).

import { afterEach, describe, expect, it } from "vitest";
import { Broker } from "../../src/broker/broker.ts";
import { DEFAULT_ZONE } from "../../src/broker/settings.ts";
import { makeMessage, type QoS } from "../../src/broker/types.ts";
import { ClusterKeys } from "../../src/cluster/keys.ts";
import { MemoryStore } from "../../src/cluster/memory-store.ts";
import { RuleEngine } from "../../src/rules/engine/engine.ts";
import { silentLogger } from "../../src/telemetry/logger.ts";

const turn = () => new Promise<void>((r) => setImmediate(r));
const engines: RuleEngine[] = [];

afterEach(async () => {
  for (const e of engines.splice(0)) await e.stop();
});

async function engineOn(queueLimit?: number) {
  const broker = new Broker(
    {
      nodeName: "q@127.0.0.1",
      sharedStrategy: "random",
      zones: new Map([["external", { ...DEFAULT_ZONE }]]),
      tickInterval: 1000,
    },
    silentLogger(),
  );
  const engine = new RuleEngine({
    broker,
    store: new MemoryStore(),
    keys: new ClusterKeys("svc", "q"),
    logger: silentLogger(),
    queueLimit,
  });
  engines.push(engine);
  await engine.start({ activate: () => true, deactivate: () => true }, { set() {} });
  await engine.putRule({
    id: "rule:q",
    rawsql: 'SELECT * FROM "q/#"',
    actions: [{ id: "do_nothing_q", name: "do_nothing", params: {}, fallbacks: [] }],
    description: "",
    enabled: true,
    on_action_failed: "continue",
    created_at: Date.now(),
  });
  engine.load();
  const publish = (qos: QoS) =>
    broker.publish(makeMessage({ from: "p", topic: "q/t", payload: Buffer.from("x"), qos, retain: false }), true);
  const metrics = () => engine.loadedRule("rule:q")?.metrics;
  return { broker, engine, publish, metrics };
}

describe("rule engine queue", () => {
  it("evaluates every event queued before a turn in that turn: bursts per turn never overflow it", async () => {
    const { engine, publish, metrics } = await engineOn();
    // 20 turns of 1,500 publishes each: with a fixed 512 a turn, the queue (10,000) would be full
    // by the 8th turn and the rest would fail.
    // A turn stops early only when its 10 ms budget runs out (a cold start on a slow machine): what
    // it leaves is less than one burst, never a backlog growing turn after turn.
    for (let t = 0; t < 20; t++) {
      for (let i = 0; i < 1500; i++) publish(0);
      await turn();
      expect(engine.backlog, `turn ${t}`).toBeLessThan(1500);
    }
    while (engine.backlog > 0) await turn();
    expect(metrics()).toMatchObject({ matched: 30_000, passed: 30_000, failed: 0 });
  });

  it("runs the oldest events itself when a publish finds the queue full: a flood within one turn loses nothing", async () => {
    const { engine, publish, metrics } = await engineOn();
    for (let i = 0; i < 50_000; i++) publish(0); // five times the queue, in one turn
    expect(engine.backlog).toBeLessThanOrEqual(10_000);
    while (engine.backlog > 0) await turn();
    expect(metrics()).toMatchObject({ matched: 50_000, passed: 50_000, failed: 0 });
  });

  it("holds QoS 1/2 acknowledgements while the queue is over half full, until it drained", async () => {
    const { broker, publish, metrics } = await engineOn(8);
    let released = 0;
    const holder = () => {
      const c = broker.congested;
      c?.holdAck(() => released++);
      return c;
    };
    publish(1);
    publish(2);
    publish(1);
    expect(holder()).toBeNull(); // 3 queued: under the high watermark (4)
    publish(0);
    expect(holder()).toBeNull(); // QoS 0 is never held
    publish(1);
    expect(holder()).not.toBeNull(); // 5 queued
    publish(2);
    expect(holder()).toBe(broker.congested);
    expect(released).toBe(0);
    await turn();
    expect(released).toBe(2);
    expect(metrics()).toMatchObject({ matched: 6, passed: 6, failed: 0 });
    // A full queue: the publish that finds it so runs its oldest quarter first (nothing fails).
    for (let i = 0; i < 10; i++) publish(1);
    expect(metrics()).toMatchObject({ matched: 8, passed: 8, failed: 0 }); // (counted as events are taken)
    holder();
    await turn();
    expect(released).toBe(3);
    expect(metrics()).toMatchObject({ matched: 16, passed: 16, failed: 0 });
  });
});
