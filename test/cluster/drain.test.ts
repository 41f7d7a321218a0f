// Graceful drain for real: two nodes as child processes on a real etcd, persistent-session QoS 1
// subscribers (MQTT 5.0 and 3.1.1) on node A, a QoS 1 publisher of numbered messages on node B.
// A gets SIGTERM while the traffic flows: the 5.0 clients get DISCONNECT 0x9C with a Server
// Reference to B and reconnect there, the 3.1.1 clients are closed and reconnect to B; their
// sessions move to B with what they were owed. Every message arrives (duplicates are counted and
// reported: QoS 1 allows them), A exits 0, and A's registrations are gone from etcd.

import mqtt, { type IDisconnectPacket, type MqttClient } from "mqtt";
import { afterAll, beforeAll, expect, it } from "vitest";
import { EtcdStore } from "../../src/cluster/etcd-store.ts";
import { ClusterKeys } from "../../src/cluster/keys.ts";
import { type ChildNode, startChildNode } from "../helpers/child-node.ts";
import { describeEtcd, type EtcdServer, findEtcd } from "../helpers/etcd.ts";
import { waitUntil } from "../helpers/wait.ts";

const provider = await findEtcd();
const TOPIC = "drain/t";
const TOTAL = 400;

/** One persistent subscriber that follows its node's hints: reconnects on close, to `next`. */
class Subscriber {
  readonly got = new Map<number, number>();
  disconnect: IDisconnectPacket | null = null;
  client: MqttClient | null = null;
  moved = false;

  constructor(
    readonly id: string,
    readonly version: 4 | 5,
    private readonly next: () => string,
  ) {}

  async connect(url: string): Promise<void> {
    // Handlers before the CONNACK: a resumed session's messages may arrive in the same read.
    const c = mqtt.connect(url, {
      clientId: this.id,
      protocolVersion: this.version,
      clean: false,
      properties: this.version === 5 ? { sessionExpiryInterval: 600 } : undefined,
      reconnectPeriod: 0,
    });
    this.client = c;
    c.on("error", () => {});
    const connected = new Promise<void>((resolve, reject) => {
      c.once("connect", () => resolve());
      c.once("close", () => reject(new Error(`${this.id}: closed before CONNACK`)));
    });
    c.on("message", (_t, p) => {
      const n = Number(p.toString());
      if (Number.isInteger(n)) this.got.set(n, (this.got.get(n) ?? 0) + 1);
    });
    c.on("disconnect", (pk) => {
      this.disconnect = pk;
    });
    c.once("close", () => {
      if (this.moved) return;
      this.moved = true;
      // 5.0: where the server sent us; 3.1.1: the other address we were given.
      const ref = this.disconnect?.properties?.serverReference;
      const url = ref === undefined ? this.next() : `mqtt://${ref}`;
      void this.connect(url).catch(() => {});
    });
    await connected;
  }

  missing(): number[] {
    const out: number[] = [];
    for (let i = 0; i < TOTAL; i++) if (!this.got.has(i)) out.push(i);
    return out;
  }

  duplicates(): number {
    let d = 0;
    for (const n of this.got.values()) d += n - 1;
    return d;
  }
}

describeEtcd("graceful drain of a clustered node (SIGTERM)", provider, (etcdProvider) => {
  let etcd: EtcdServer;
  let prefix: string;
  let a: ChildNode;
  let b: ChildNode;
  const others: ChildNode[] = [];
  const subs: Subscriber[] = [];
  let pub: MqttClient | null = null;

  const start = (name: string): Promise<ChildNode> =>
    startChildNode({
      "node.name": `${name}@127.0.0.1`,
      "cluster.discovery": "etcd",
      "cluster.etcd.server": etcd.endpoint,
      "cluster.etcd.prefix": prefix,
      "cluster.etcd.node_ttl": "10s",
      "rpc.tcp_server_port": "0",
      "node.drain_timeout": "15s",
    });

  beforeAll(async () => {
    etcd = await etcdProvider.start();
    prefix = `svcdrain${Date.now()}`;
    [a, b] = await Promise.all([start("da"), start("db")]);
  }, 60_000);

  afterAll(async () => {
    for (const s of subs) await s.client?.endAsync(true).catch(() => {});
    await pub?.endAsync(true).catch(() => {});
    for (const n of [a, b, ...others]) {
      await n?.kill();
      n?.cleanup();
    }
    await etcd?.close();
  }, 30_000);

  it("moves persistent sessions to the other node without losing a QoS 1 message", async () => {
    const urlA = `mqtt://127.0.0.1:${a.tcpPort}`;
    const urlB = `mqtt://127.0.0.1:${b.tcpPort}`;
    for (let i = 0; i < 6; i++) {
      const s = new Subscriber(`dsub${i}`, i < 4 ? 5 : 4, () => urlB);
      await s.connect(urlA);
      await s.client?.subscribeAsync(TOPIC, { qos: 1 });
      subs.push(s);
    }
    pub = await mqtt.connectAsync(urlB, { clientId: "dpub", protocolVersion: 5, reconnectPeriod: 0 });
    // Warm-up: B routes the topic to A once every subscriber gets a probe published on B.
    const probe = "probe";
    const probed = new Set<string>();
    for (const s of subs) s.client?.on("message", (_t, p) => p.toString() === probe && probed.add(s.id));
    await waitUntil(
      async () => {
        await pub?.publishAsync(TOPIC, probe, { qos: 1 });
        return probed.size === subs.length;
      },
      "route of A known on B",
      15_000,
    );

    const exited = new Promise<number | null>((r) => a.proc.once("exit", (code) => r(code)));
    let termAt = 0;
    for (let i = 0; i < TOTAL; i++) {
      if (i === 100) {
        termAt = Date.now();
        a.proc.kill("SIGTERM");
      }
      await pub.publishAsync(TOPIC, String(i), { qos: 1 });
      if (i % 4 === 0) await new Promise((r) => setImmediate(r));
    }
    await waitUntil(
      () => subs.every((s) => s.missing().length === 0),
      "every message at every subscriber",
      30_000,
    ).catch(() => {});
    const missing = subs.map((s) => [s.id, s.missing()] as const).filter(([, m]) => m.length > 0);
    const dups = subs.reduce((n, s) => n + s.duplicates(), 0);
    console.info(
      `drain: ${subs.length} subscribers x ${TOTAL} QoS 1 messages, ${dups} duplicates (${subs.map((s) => s.duplicates()).join("/")})`,
    );
    expect(missing).toEqual([]);

    expect(await exited).toBe(0);
    console.info(`drain: node A exited 0 ${Date.now() - termAt} ms after SIGTERM`);
    for (const s of subs) expect(s.moved, s.id).toBe(true);
    for (const s of subs.filter((x) => x.version === 5)) {
      expect(s.disconnect?.reasonCode, s.id).toBe(0x9c);
      expect(s.disconnect?.properties?.serverReference, s.id).toBe(`127.0.0.1:${b.tcpPort}`);
    }
    expect(a.output()).toMatch(/"msg":"drained"/);

    // A deregistered: no node key, routes or client registrations of A are left in etcd.
    const store = new EtcdStore({ hosts: [etcd.endpoint] });
    try {
      const keys = new ClusterKeys(prefix, "svccl");
      expect(await store.get(keys.node("da@127.0.0.1"))).toBeUndefined();
      const { entries } = await store.range(keys.root);
      const leftovers = entries
        .filter((e) => !e.key.startsWith(`${keys.root}members/`))
        .filter((e) => e.key.endsWith("/da@127.0.0.1") || e.value.toString() === "da@127.0.0.1")
        .map((e) => e.key);
      expect(leftovers).toEqual([]);
      // The sessions now belong to B.
      for (const s of subs) expect((await store.get(keys.client(s.id)))?.value.toString()).toBe("db@127.0.0.1");
    } finally {
      await store.close();
    }
  }, 90_000);

  it("answers 503 and /livez 200 while it waits, and a second SIGTERM stops it at once", async () => {
    const c = await start("dc");
    others.push(c);
    const api = c.apiPort();
    const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${c.tcpPort}`, {
      clientId: "never-back",
      protocolVersion: 5,
      clean: false,
      properties: { sessionExpiryInterval: 600 },
      reconnectPeriod: 0,
    });
    client.on("error", () => {});
    await client.subscribeAsync("nb/t", { qos: 1 });
    // B must be known as a peer before the drain, or the node would drain as a single one.
    await waitUntil(() => /"peer":"db@127\.0\.0\.1".*"msg":"inter-node link up"/.test(c.output()), "link to B", 10_000);
    const exited = new Promise<number | null>((r) => c.proc.once("exit", (code) => r(code)));
    c.proc.kill("SIGTERM");
    // The client never comes back: the drain waits (node.drain_timeout 15 s), probes tell.
    await waitUntil(
      async () => (await fetch(`http://127.0.0.1:${api}/status`).catch(() => null))?.status === 503,
      "503 while draining",
    );
    const live = await fetch(`http://127.0.0.1:${api}/livez`);
    expect([live.status, await live.text()]).toEqual([200, "ok"]);
    await client.endAsync(true);
    const t0 = Date.now();
    c.proc.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(c.output()).toMatch(/second signal: stopping now/);
    expect(c.output()).toMatch(/"lost":1,.*"msg":"drained"/);
  }, 60_000);
});
