// Tracing across two nodes clustered on a real etcd: a 5.0 publish with `traceparent` on n1 to a
// subscriber on n2 makes one trace: publish (n1) -> forward (n1) -> dispatch (n2) -> deliver (n2),
// the context crossing the link in the forwarded message's headers.

import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import mqtt, { type MqttClient } from "mqtt";
import { afterAll, beforeAll, expect, it } from "vitest";
import { clusterMember, describeEtcd, type EtcdServer, findEtcd } from "../helpers/etcd.ts";
import { startTestNode, type TestNode } from "../helpers/node.ts";
import { waitUntil } from "../helpers/wait.ts";

const provider = await findEtcd();
const TRACE = "0af7651916cd43dd8448eb211c80319c";
const PARENT = "b7ad6b7169203331";

const until = (pred: () => boolean | Promise<boolean>, what: string, ms = 8000): Promise<void> =>
  waitUntil(pred, what, ms);

describeEtcd("tracing across a 2-node cluster", provider, (etcdProvider) => {
  let etcd: EtcdServer;
  const nodes: TestNode[] = [];
  const exporters: InMemorySpanExporter[] = [];
  const clients: MqttClient[] = [];

  beforeAll(async () => {
    etcd = await etcdProvider.start();
    const prefix = `svctrace${Date.now()}`;
    for (const name of ["t1", "t2"]) {
      const exporter = new InMemorySpanExporter();
      exporters.push(exporter);
      nodes.push(
        await startTestNode({
          set: {
            ...clusterMember(name, etcd, prefix),
            "telemetry.tracing": "on",
          },
          tracing: { spanProcessors: [new SimpleSpanProcessor(exporter)] },
        }),
      );
    }
    await until(() => nodes.every((n) => (n.cluster?.runningNodes().length ?? 0) === 2), "membership");
  }, 30_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.endAsync().catch(() => {})));
    for (const n of nodes) await n.close().catch(() => {});
    await etcd?.close();
  }, 30_000);

  it("publish on n1, forward, dispatch and deliver on n2: one trace, parent chain intact", async () => {
    const [n1, n2] = nodes;
    const sub = await mqtt.connectAsync(n2.url, { clientId: "c-sub", protocolVersion: 5, reconnectPeriod: 0 });
    clients.push(sub);
    await sub.subscribeAsync("ct/+", { qos: 1 });
    await until(
      () => [...(n1.cluster?.routes.entries() ?? [])].some(([f, node]) => f === "ct/+" && node === n2.broker.nodeName),
      "route on n1",
    );
    const got: Record<string, unknown>[] = [];
    sub.on("message", (_t, _p, packet) =>
      got.push((packet.properties?.userProperties ?? {}) as Record<string, unknown>),
    );
    const pub = await mqtt.connectAsync(n1.url, { clientId: "c-pub", protocolVersion: 5, reconnectPeriod: 0 });
    clients.push(pub);
    await pub.publishAsync("ct/1", "hi", {
      qos: 1,
      properties: { userProperties: { traceparent: `00-${TRACE}-${PARENT}-01` } },
    });
    await until(() => got.length === 1, "delivery on n2");
    const on = (i: number, name: string): ReadableSpan => {
      const s = exporters[i].getFinishedSpans().filter((x) => x.name === name);
      expect(s, `${name} on node ${i + 1}`).toHaveLength(1);
      return s[0];
    };
    await until(() => exporters[1].getFinishedSpans().some((s) => s.name === "dispatch ct/1"), "dispatch span");
    const publish = on(0, "publish ct/1");
    const forward = on(0, "forward ct/1");
    const dispatch = on(1, "dispatch ct/1");
    const deliver = on(1, "deliver ct/1");
    for (const s of [publish, forward, dispatch, deliver]) expect(s.spanContext().traceId).toBe(TRACE);
    expect(publish.parentSpanContext?.spanId).toBe(PARENT);
    expect(forward.parentSpanContext?.spanId).toBe(publish.spanContext().spanId);
    expect(forward.attributes["svc.peer"]).toBe(n2.broker.nodeName);
    expect(dispatch.parentSpanContext?.spanId).toBe(forward.spanContext().spanId);
    expect(dispatch.attributes["svc.node"]).toBe(n2.broker.nodeName);
    expect(deliver.parentSpanContext?.spanId).toBe(dispatch.spanContext().spanId);
    expect(got[0].traceparent).toBe(`00-${TRACE}-${deliver.spanContext().spanId}-01`);
    // n1 has no local subscriber: no deliver span there.
    expect(exporters[0].getFinishedSpans().filter((s) => s.name === "deliver ct/1")).toEqual([]);
  });
});
