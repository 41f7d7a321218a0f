// The broker hooks that feed the rule engine: one registration per event a rule uses, each building
// that event's context (the columns of RULE_EVENTS) lazily, in the engine's worker.

import type { BrokerHooks } from "../../broker/hookpoints.ts";
import type { Message } from "../../broker/types.ts";
import { PRIORITY } from "../../hooks/priorities.ts";
import type { EventKey } from "../event-names.ts";
import type { Row } from "../runtime/values.ts";
import * as C from "./context.ts";

/** Registration options of the message hooks: rules never act on system messages. */
const SKIPS_SYSTEM = { ignoresSystem: true };

export function addEventHook(
  h: BrokerHooks,
  k: EventKey,
  owner: string,
  node: string,
  onPublish: (msg: Message) => undefined,
  fire: (k: EventKey, build: () => Row) => void,
): boolean {
  const p = PRIORITY.rules;
  switch (k) {
    case "message.publish":
      h.add("message.publish", onPublish, p, owner, SKIPS_SYSTEM);
      return true;
    case "message.delivered":
    case "message.acked":
      h.add(
        k,
        (c, m) => {
          if (!m.sys) fire(k, () => C.deliveredCtx(k, c, m, node));
        },
        p,
        owner,
      );
      return true;
    case "message.dropped":
      h.add(
        k,
        (m, _by, reason) => {
          if (!m.sys) fire(k, () => C.droppedCtx(m, reason, node));
        },
        p,
        owner,
        SKIPS_SYSTEM,
      );
      return true;
    case "client.connected":
      h.add(k, (c, i) => fire(k, () => C.connectedCtx(c, i, node)), p, owner);
      return true;
    case "client.disconnected":
      h.add(k, (c, reason) => fire(k, () => C.disconnectedCtx(c, reason, node)), p, owner);
      return true;
    case "client.connack":
      h.add(k, (c, rc) => fire(k, () => C.connackCtx(c, rc, node)), p, owner);
      return true;
    case "client.subscribe":
      h.add(
        k,
        (c, filters) => {
          const entries = C.subscribeEntries(filters);
          fire(k, () => C.subscribeCtx(k, c, entries, node));
          return undefined;
        },
        p,
        owner,
      );
      return true;
    case "client.unsubscribe":
      h.add(
        k,
        (c, filters) => {
          const entries = filters.map((f) => ({ topic: f, qos: 0 }));
          fire(k, () => C.subscribeCtx(k, c, entries, node));
          return undefined;
        },
        p,
        owner,
      );
      return true;
    case "session.subscribed":
      h.add(k, (c, f, o) => fire(k, () => C.sessionSubCtx(k, c, f, o, node)), p, owner);
      return true;
    case "session.unsubscribed":
      h.add(k, (c, f, o) => fire(k, () => C.sessionSubCtx(k, c, f, o, node)), p, owner);
      return true;
    case "delivery.dropped":
      h.add(
        k,
        (c, m, reason) => {
          if (!m.sys) fire(k, () => C.deliveryDroppedCtx(c, m, reason, node));
        },
        p,
        owner,
      );
      return true;
    case "client.check_acl_complete":
      h.add(
        k,
        (c, action, topic, result, isCache) => fire(k, () => C.aclCompleteCtx(c, action, topic, result, isCache, node)),
        p,
        owner,
      );
      return true;
    default:
      return false;
  }
}
