// The inter-node link over TLS from configuration (rpc.tls.keyfile / rpc.tls.certfile): two nodes
// on a real etcd deliver across the encrypted link; the certificate is generated in the test.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import mqtt from "mqtt";
import { generate } from "selfsigned";
import { afterAll, beforeAll, expect, it } from "vitest";
import { clusterMember, describeEtcd, type EtcdServer, findEtcd } from "../helpers/etcd.ts";
import { startTestNode, type TestNode } from "../helpers/node.ts";
import { waitUntil } from "../helpers/wait.ts";

const provider = await findEtcd();

const until = (pred: () => boolean | Promise<boolean>, what: string, ms = 10000): Promise<void> =>
  waitUntil(pred, what, ms);

describeEtcd("inter-node link over TLS", provider, (etcdProvider) => {
  let etcd: EtcdServer;
  let dir: string;
  const nodes: TestNode[] = [];

  beforeAll(async () => {
    etcd = await etcdProvider.start();
    dir = mkdtempSync(join(tmpdir(), "svc-link-tls-"));
    const pems = await generate([{ name: "commonName", value: "svc-link" }], { keyType: "ec", algorithm: "sha256" });
    writeFileSync(join(dir, "key.pem"), pems.private, { mode: 0o600 });
    writeFileSync(join(dir, "cert.pem"), pems.cert);
    const prefix = `tls${Date.now()}`;
    for (const name of ["t1", "t2"]) {
      nodes.push(
        await startTestNode({
          set: {
            ...clusterMember(name, etcd, prefix),
            "rpc.tls.keyfile": join(dir, "key.pem"),
            "rpc.tls.certfile": join(dir, "cert.pem"),
          },
        }),
      );
    }
  }, 30_000);

  afterAll(async () => {
    for (const n of nodes) await n.close().catch(() => {});
    await etcd?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("delivers across nodes over the TLS link", async () => {
    const [t1, t2] = nodes;
    const sub = await mqtt.connectAsync(t2.url, { clientId: "tls-sub", reconnectPeriod: 0 });
    await sub.subscribeAsync("tls/t", { qos: 1 });
    await until(
      () => [...(t1.cluster?.routes.entries() ?? [])].some(([f, n]) => f === "tls/t" && n === "t2@127.0.0.1"),
      "route on t1",
    );
    const got = new Promise<string>((r) => sub.once("message", (_t, p) => r(p.toString())));
    const pub = await mqtt.connectAsync(t1.url, { clientId: "tls-pub", reconnectPeriod: 0 });
    await pub.publishAsync("tls/t", "secret", { qos: 1 });
    expect(await got).toBe("secret");
    expect(t1.cluster?.link.peers().find((p) => p.node === "t2@127.0.0.1")?.connected).toBe(true);
    await Promise.all([sub.endAsync(), pub.endAsync()]);
  });
});
