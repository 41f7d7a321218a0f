// Topic functions (emqx-facts 1.2) over the `topic_filters` list of client.subscribe and
// client.unsubscribe events, whose items are `{topic, qos, ...}` maps (also accepted: a
// [topic, {qos}] pair or a bare topic string):
//   contains_topic(filters, topic[, qos])        an item's topic equals `topic` (and, with qos,
//                                                the first such item has that QoS)
//   contains_topic_match(filters, filter[, qos]) an item's topic falls under the wildcard filter
//                                                `filter` (as the family: the argument is the
//                                                filter, the items are matched against it)

import { matchTopic } from "../../../mqtt/topic.ts";
import { getOwn, isMap, termEqual, textOf } from "../values.ts";
import { argList, argStr } from "./args.ts";
import { type FnTable, fn } from "./types.ts";

interface Item {
  topic: string | null;
  qos: unknown;
}

function item(v: unknown): Item {
  if (typeof v === "string") return { topic: v, qos: undefined };
  if (Array.isArray(v)) {
    const opts = v[1];
    return { topic: textOf(v[0]), qos: isMap(opts) ? getOwn(opts, "qos") : undefined };
  }
  if (isMap(v)) {
    const subOpts = getOwn(v, "sub_opts");
    const qos = Object.hasOwn(v, "qos") ? v.qos : isMap(subOpts) ? getOwn(subOpts, "qos") : undefined;
    return { topic: textOf(getOwn(v, "topic")), qos };
  }
  return { topic: null, qos: undefined };
}

function contains(fname: string, a: unknown[], match: (itemTopic: string, arg: string) => boolean): boolean {
  const filters = argList(fname, a, 0);
  const topic = argStr(fname, a, 1);
  for (const f of filters) {
    const it = item(f);
    if (it.topic !== null && match(it.topic, topic)) return a.length < 3 || termEqual(it.qos, a[2]);
  }
  return false;
}

export const topicFunctions: FnTable = {
  contains_topic: fn([2, 3], (a) => contains("contains_topic", a, (t, arg) => t === arg)),
  contains_topic_match: fn([2, 3], (a) => contains("contains_topic_match", a, (t, arg) => matchTopic(arg, t))),
};
