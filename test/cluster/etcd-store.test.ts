// EtcdStore against a real etcd (test/helpers/etcd.ts: testcontainers or the binary on PATH): the
// ClusterStore contract, then the faults: etcd unreachable from the start, and etcd stopped and
// restarted under a live store (fail fast with StoreUnavailableError, recover when it is back).

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EtcdStore } from "../../src/cluster/etcd-store.ts";
import { StoreUnavailableError } from "../../src/cluster/store-errors.ts";
import { describeEtcd, type EtcdServer, findEtcd, findEtcdBinary, freePort, startEtcdBinary } from "../helpers/etcd.ts";
import { EventLog, storeContract } from "./store-contract.ts";

const b = (s: string): Buffer => Buffer.from(s, "utf8");
const provider = await findEtcd();

/** Resolves with how long `p` took to reject, failing if it resolves. */
async function rejectsWithin(p: Promise<unknown>): Promise<{ err: unknown; ms: number }> {
  const start = Date.now();
  try {
    await p;
  } catch (err) {
    return { err, ms: Date.now() - start };
  }
  throw new Error("expected a rejection");
}

describe("EtcdStore without etcd", () => {
  it("fails fast with StoreUnavailableError (cause attached) when nothing listens", async () => {
    const store = new EtcdStore({ hosts: [`http://127.0.0.1:${await freePort()}`], onError: () => {} });
    for (const call of [
      () => store.get("k"),
      () => store.put("k", b("v")),
      () => store.range("p/"),
      () => store.txn({ compare: [], success: [] }),
      () => store.grantLease(1000),
      () => store.watch("p/", () => {}),
    ]) {
      const { err, ms } = await rejectsWithin(call());
      expect(err).toBeInstanceOf(StoreUnavailableError);
      expect((err as Error).cause).toBeInstanceOf(Error);
      expect(ms).toBeLessThan(2000);
    }
    await store.close();
  });
});

describeEtcd("EtcdStore", provider, (etcd) => {
  let server: EtcdServer;
  beforeAll(async () => {
    server = await etcd.start();
  }, 60_000);
  afterAll(async () => {
    await server?.close();
  });

  storeContract("EtcdStore", {
    open: async () => new EtcdStore({ hosts: [server.endpoint], onError: () => {} }),
    // etcd counts whole seconds and raises short TTLs: a 1 s lease lives ~1.25 s with fast raft timers.
    leaseTtlMs: 1000,
    expirySlackMs: 1500,
  });

  // Stopping and restarting etcd needs the process itself: the binary (a container cannot keep its port).
  const etcdBin = findEtcdBinary();
  (etcdBin === undefined ? describe.skip : describe)("across an etcd outage (needs the etcd binary)", () => {
    let server: EtcdServer;
    beforeAll(async () => {
      server = await startEtcdBinary(etcdBin as string);
    }, 60_000);
    afterAll(async () => {
      await server?.close();
    });

    it("fails fast while etcd is down, recovers when it is back; the watch resumes", async () => {
      const errors: unknown[] = [];
      const store = new EtcdStore({ hosts: [server.endpoint], onError: (e) => errors.push(e) });
      await store.put("o/before", b("1"));
      const log = new EventLog();
      const w = await store.watch("o/", log.on);
      const lease = await store.grantLease(1000);
      const lost = new Promise<Error>((resolve) => lease.onLost(resolve));
      await store.put("o/leased", b("x"), { lease });

      await server.stop();
      for (const call of [
        () => store.get("o/before"),
        () => store.put("o/during", b("x")),
        () => store.grantLease(1000),
      ]) {
        const { err, ms } = await rejectsWithin(call());
        expect(err).toBeInstanceOf(StoreUnavailableError);
        expect((err as Error).cause).toBeInstanceOf(Error);
        expect(ms).toBeLessThan(2000);
      }
      const watchErr = await rejectsWithin(store.watch("o/", () => {}));
      expect(watchErr.err).toBeInstanceOf(StoreUnavailableError);
      // Unrenewable for longer than its TTL: the holder is told its lease is gone.
      expect(String(await lost)).toMatch(/lease/i);

      await server.start();
      const back = Date.now();
      // Recovery: calls succeed again as soon as etcd answers (no breaker holding them off).
      for (;;) {
        try {
          await store.put("o/after", b("2"));
          break;
        } catch (err) {
          expect(err).toBeInstanceOf(StoreUnavailableError);
          if (Date.now() - back > 5000) throw err;
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      expect(Date.now() - back).toBeLessThan(5000);
      expect((await store.get("o/before"))?.value.toString()).toBe("1");
      // The watch established before the outage resumes and sees the write made after it.
      await log.until((evs) => evs.some((e) => e.key === "o/after"), 10_000);
      expect(log.summary().filter((s) => s.startsWith("put o/after"))).toEqual(["put o/after=2"]);
      const fresh = await store.grantLease(1000);
      await store.put("o/leased", b("again"), { lease: fresh });
      await fresh.revoke();
      await w.close();
      await store.close();
      expect(errors).toEqual([]);
    }, 30_000);
  });
});
