// TLS to etcd (`cluster.etcd.ssl.*`) against a real etcd started here with --client-cert-auth
// (certificates made with openssl for the test): the store opened from the configuration reads
// and writes over TLS with the client certificate; a wrong CA, or no client certificate, fails
// as a store that is unavailable; key and certificate go together or the start stops.

import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { etcdCredentials, openStore } from "../../src/cluster/open-store.ts";
import { StoreUnavailableError } from "../../src/cluster/store-errors.ts";
import { ConfigError, loadConfig } from "../../src/config/index.ts";
import { findEtcdBinary, freePort } from "../helpers/etcd.ts";
import { waitUntil } from "../helpers/wait.ts";

const etcdBin = findEtcdBinary();
const openssl = ["/usr/bin/openssl", "/usr/local/bin/openssl"].find((p) => {
  try {
    execFileSync(p, ["version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
});
const missing = etcdBin === undefined ? "etcd" : openssl === undefined ? "openssl" : null;
if (missing !== null && process.env.CI)
  throw new Error(`etcd TLS test: ${missing} is not installed (apt-get install etcd-server openssl)`);
if (missing !== null) console.warn(`SKIPPED etcd TLS test: ${missing} is not installed`);

/** A CA and a certificate it signed for `cn` (with 127.0.0.1 as subject alternative name). */
function makeCerts(dir: string, ca: string, names: string[]): void {
  const run = (...args: string[]) => execFileSync(openssl as string, args, { cwd: dir, stdio: "ignore" });
  run(
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    "2",
    "-subj",
    `/CN=${ca}`,
    "-keyout",
    `${ca}-key.pem`,
    "-out",
    `${ca}.pem`,
  );
  for (const n of names) {
    run("req", "-newkey", "rsa:2048", "-nodes", "-subj", `/CN=${n}`, "-keyout", `${n}-key.pem`, "-out", `${n}.csr`);
    const ext = join(dir, `${n}.ext`);
    execFileSync("sh", [
      "-c",
      `printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\nextendedKeyUsage=serverAuth,clientAuth\\n' > ${ext}`,
    ]);
    run(
      "x509",
      "-req",
      "-in",
      `${n}.csr`,
      "-CA",
      `${ca}.pem`,
      "-CAkey",
      `${ca}-key.pem`,
      "-CAcreateserial",
      "-days",
      "2",
      "-extfile",
      ext,
      "-out",
      `${n}.pem`,
    );
  }
}

describe.skipIf(missing !== null)("TLS to etcd", () => {
  let dir: string;
  let etcd: ChildProcess;
  let endpoint: string;
  const file = (name: string) => join(dir, name);
  const config = (ssl: Record<string, string>) =>
    loadConfig({
      overrides: {
        "node.data_dir": join(dir, "data"),
        "cluster.discovery": "etcd",
        "cluster.etcd.server": endpoint,
        ...ssl,
      },
    });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "svc-etcd-tls-"));
    makeCerts(dir, "ca", ["server", "client"]);
    makeCerts(dir, "other-ca", []);
    const client = await freePort();
    const peer = await freePort();
    endpoint = `https://127.0.0.1:${client}`;
    etcd = spawn(
      etcdBin as string,
      [
        ...["--name", "tls1", "--data-dir", file("etcd")],
        ...["--listen-client-urls", endpoint, "--advertise-client-urls", endpoint],
        ...[
          "--listen-peer-urls",
          `http://127.0.0.1:${peer}`,
          "--initial-advertise-peer-urls",
          `http://127.0.0.1:${peer}`,
        ],
        ...["--initial-cluster", `tls1=http://127.0.0.1:${peer}`, "--log-level", "error"],
        ...["--cert-file", file("server.pem"), "--key-file", file("server-key.pem")],
        ...["--client-cert-auth", "--trusted-ca-file", file("ca.pem")],
      ],
      { stdio: "ignore" },
    );
    const probe = await openStore(
      config({
        "cluster.etcd.ssl.cacertfile": file("ca.pem"),
        "cluster.etcd.ssl.keyfile": file("client-key.pem"),
        "cluster.etcd.ssl.certfile": file("client.pem"),
      }),
    );
    await waitUntil(
      () =>
        probe.get("probe").then(
          () => true,
          () => false,
        ),
      "etcd answering over TLS",
      20_000,
    );
    await probe.close();
  }, 40_000);

  afterAll(async () => {
    if (etcd !== undefined && etcd.exitCode === null) {
      const gone = new Promise((r) => etcd.once("exit", r));
      etcd.kill("SIGKILL");
      await gone;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it("reads and writes with the CA and the client certificate", async () => {
    const store = await openStore(
      config({
        "cluster.etcd.ssl.cacertfile": file("ca.pem"),
        "cluster.etcd.ssl.keyfile": file("client-key.pem"),
        "cluster.etcd.ssl.certfile": file("client.pem"),
      }),
    );
    try {
      await store.put("tls/k", Buffer.from("v"));
      expect((await store.get("tls/k"))?.value.toString()).toBe("v");
    } finally {
      await store.close();
    }
  });

  it("a CA that did not sign etcd's certificate: the store is unavailable", async () => {
    const store = await openStore(
      config({
        "cluster.etcd.ssl.cacertfile": file("other-ca.pem"),
        "cluster.etcd.ssl.keyfile": file("client-key.pem"),
        "cluster.etcd.ssl.certfile": file("client.pem"),
      }),
    );
    try {
      await expect(store.get("tls/k")).rejects.toBeInstanceOf(StoreUnavailableError);
    } finally {
      await store.close();
    }
  });

  it("no client certificate where etcd asks for one: the store is unavailable", async () => {
    const store = await openStore(config({ "cluster.etcd.ssl.cacertfile": file("ca.pem") }));
    try {
      await expect(store.get("tls/k")).rejects.toBeInstanceOf(StoreUnavailableError);
    } finally {
      await store.close();
    }
  });

  it("keyfile without certfile stops the start; nothing set means plain gRPC", () => {
    expect(() => config({ "cluster.etcd.ssl.keyfile": file("client-key.pem") })).toThrow(ConfigError);
    expect(() => config({ "cluster.etcd.ssl.keyfile": file("client-key.pem") })).toThrow(
      /cluster.etcd.ssl.keyfile and cluster.etcd.ssl.certfile go together/,
    );
    expect(etcdCredentials(config({}))).toBeUndefined();
  });
});
