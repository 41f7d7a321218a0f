// BrokerTracing's deliver state, per traced message, in its headers: a message whose headers came
// without it (a copy of a traced message's headers: forwarded, replicated, stored) gets one at its
// first delivery, parented to the carrier its headers hold; later deliveries of the same message
// share it (the deliver span cap counts them all); a copy of the headers does not take it along.
// The SDK's in-memory exporter collects the deliver spans (no broker: the port is called directly).

import * as api from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  ParentBasedSampler,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
} from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { type ClientInfo, makeMessage } from "../../src/broker/types.ts";
import { Tracing } from "../../src/telemetry/tracing.ts";
import { BrokerTracing } from "../../src/tracing/broker-tracing.ts";
import { clientInfo } from "../helpers/client-info.ts";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT = "00f067aa0ba902b7";

function client(clientId: string): ClientInfo {
  return clientInfo({ clientId });
}

function setup(maxDeliverSpans: number) {
  const exporter = new InMemorySpanExporter();
  const sampler = new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(1) });
  const provider = new BasicTracerProvider({ sampler, spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const t = new Tracing(api, provider.getTracer("test"), maxDeliverSpans, { root: 1, parentBased: true });
  return { bt: new BrokerTracing(t, "n1"), exporter };
}

/** A traced message whose headers hold only the carrier (and another header), as a copy's do. */
function traced() {
  const msg = makeMessage({ from: "pub", topic: "a/b", payload: Buffer.from("x"), qos: 1, retain: false });
  msg.headers = { traceparent: `00-${TRACE}-${PARENT}-01`, app: "kept" };
  return msg;
}

describe("deliver state of a traced message", () => {
  it("headers without it: made at the first delivery under their carrier, shared by the later ones, capped", () => {
    const { bt, exporter } = setup(2);
    const msg = traced();
    const got = ["s1", "s2", "s3"].map((id) => bt.deliver(msg, client(id), 1, true));
    const spans = exporter.getFinishedSpans();
    expect(spans.map((s) => s.attributes["messaging.consumer.id"])).toEqual(["s1", "s2"]);
    for (const s of spans) {
      expect(s.name).toBe("deliver a/b");
      expect(s.spanContext().traceId).toBe(TRACE);
      expect(s.parentSpanContext?.spanId).toBe(PARENT);
    }
    // Two deliver spans' traceparents, then (beyond the cap) the carrier the headers hold.
    expect(got.map((c) => c && `00-${c.traceId}-${c.spanId}-0${c.traceFlags}`)).toEqual([
      ...spans.map((s) => `00-${TRACE}-${s.spanContext().spanId}-01`),
      `00-${TRACE}-${PARENT}-01`,
    ]);
    // The headers keep what they held, and nothing enumerable was added.
    expect({ ...msg.headers }).toEqual({ traceparent: `00-${TRACE}-${PARENT}-01`, app: "kept" });
    expect(JSON.parse(JSON.stringify(msg.headers))).toEqual({ ...msg.headers });
  });

  it("a copy of the headers does not take the state along: the copy's message starts its own", () => {
    const { bt, exporter } = setup(1);
    const msg = traced();
    bt.deliver(msg, client("s1"), 0, false);
    expect(exporter.getFinishedSpans()).toHaveLength(1);
    // At the cap for msg; a copy (as the cluster link or a store makes) is a new message.
    expect(bt.deliver(msg, client("s2"), 0, false)).toBeNull();
    expect(exporter.getFinishedSpans()).toHaveLength(1);
    const copy = { ...msg, headers: { ...msg.headers } };
    bt.deliver(copy, client("s3"), 0, false);
    expect(exporter.getFinishedSpans().map((s) => s.attributes["messaging.consumer.id"])).toEqual(["s1", "s3"]);
  });

  it("headers whose traceparent does not parse: no deliver span, and the PUBLISH carries nothing of it", () => {
    const { bt, exporter } = setup(2);
    const msg = traced();
    msg.headers = { traceparent: `00-${"0".repeat(32)}-${PARENT}-01` };
    expect(bt.deliver(msg, client("s1"), 1, true)).toBeNull();
    expect(bt.deliver(msg, client("s2"), 0, true)).toBeNull();
    expect(exporter.getFinishedSpans()).toHaveLength(0);
  });

  it("a QoS 1 delivery's acknowledgement is an ack span under its deliver span", () => {
    const { bt, exporter } = setup(2);
    const msg = traced();
    const c = client("s1");
    bt.deliver(msg, c, 1, false);
    const broker = { tracing: null, hooks: hooksRecorder() };
    bt.attach(broker as never);
    broker.hooks.run("message.acked", c, msg);
    const [deliver, ack] = exporter.getFinishedSpans();
    expect(ack.name).toBe("ack a/b");
    expect(ack.parentSpanContext?.spanId).toBe(deliver.spanContext().spanId);
    expect(ack.attributes["mqtt.ack.packet"]).toBe("PUBACK");
  });
});

/** The part of the broker's hooks attach() uses, running a hook point's callbacks on demand. */
function hooksRecorder() {
  const added = new Map<string, ((...a: unknown[]) => unknown)[]>();
  return {
    add(point: string, fn: (...a: unknown[]) => unknown) {
      added.set(point, [...(added.get(point) ?? []), fn]);
    },
    removeOwner() {},
    run(point: string, ...args: unknown[]) {
      for (const fn of added.get(point) ?? []) fn(...args);
    },
  };
}
