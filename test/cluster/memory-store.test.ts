// The embedded store: the ClusterStore contract, then what only it does: persistence in the data
// dir across a reopen (leased keys excepted), torn log tails, compaction, watch history bounds.

import { appendFileSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MemoryStore } from "../../src/cluster/memory-store.ts";
import { StoreCompactedError, StoreError } from "../../src/cluster/store-errors.ts";
import { EventLog, storeContract } from "./store-contract.ts";

const b = (s: string): Buffer => Buffer.from(s, "utf8");

describe("MemoryStore", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "svc-store-"));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  storeContract("MemoryStore (persisted)", {
    open: async () => new MemoryStore({ dir: join(dir, "store"), onError: () => {} }),
    leaseTtlMs: 150,
    expirySlackMs: 100,
  });

  storeContract("MemoryStore (no data dir)", {
    open: async () => new MemoryStore({ onError: () => {} }),
    leaseTtlMs: 150,
    expirySlackMs: 100,
  });

  describe("persistence", () => {
    const open = (errors: unknown[] = []) =>
      new MemoryStore({ dir: join(dir, "store"), onError: (e) => errors.push(e) });

    it("survives a reopen with values, versions and revisions; the revision keeps growing", async () => {
      const s1 = open();
      await s1.put("svccl/svccl/rules/r1", b("rule 1"));
      await s1.put("svccl/svccl/rules/r1", b("rule 1 v2"));
      await s1.put("svccl/svccl/rules/r2", b("rule 2"));
      await s1.put("svccl/svccl/banned/clientid/c1", b("ban"));
      await s1.delete("svccl/svccl/rules/r2");
      await s1.put("svccl/svccl/apps/a/1", b("x"));
      await s1.put("svccl/svccl/apps/a/2", b("x"));
      await s1.deletePrefix("svccl/svccl/apps/");
      await s1.txn({
        compare: [{ key: "svccl/svccl/users/admin", target: "version", op: "==", value: 0 }],
        success: [
          { type: "put", key: "svccl/svccl/users/admin", value: b("hash") },
          { type: "put", key: "svccl/svccl/auth/username/u", value: b("salted") },
        ],
      });
      const before = await s1.range("");
      await s1.close();

      const s2 = open();
      const after = await s2.range("");
      expect(after).toEqual(before);
      expect(after.entries.map((e) => e.key)).toEqual([
        "svccl/svccl/auth/username/u",
        "svccl/svccl/banned/clientid/c1",
        "svccl/svccl/rules/r1",
        "svccl/svccl/users/admin",
      ]);
      expect(await s2.get("svccl/svccl/rules/r1")).toMatchObject({ version: 2 });
      expect(await s2.put("svccl/svccl/rules/r3", b("3"))).toBeGreaterThan(before.revision);
      await s2.close();
    });

    it("does not restore keys under a lease, nor the older value a leased put replaced", async () => {
      const s1 = open();
      const lease = await s1.grantLease(60_000);
      await s1.put("nodes/n1", b("leased"), { lease });
      await s1.put("k", b("persisted"));
      await s1.put("k", b("now leased"), { lease });
      await s1.put("kept", b("plain"));
      await s1.close();

      const s2 = open();
      expect((await s2.range("")).entries.map((e) => e.key)).toEqual(["kept"]);
      await s2.close();
    });

    it("writes reach the log at once (a crash without close loses nothing written)", async () => {
      const s1 = open();
      await s1.put("a", b("1"));
      await s1.txn({ compare: [], success: [{ type: "put", key: "b", value: b("2") }] });
      // A second reader of the same directory, as after a crash of the first process.
      const s2 = open();
      expect((await s2.range("")).entries.map((e) => e.key)).toEqual(["a", "b"]);
      await s2.close();
      await s1.close();
    });

    it("drops a torn tail, keeps the records before it and says so", async () => {
      const s1 = open();
      await s1.put("a", b("1"));
      await s1.put("b", b("2"));
      await s1.close();
      appendFileSync(join(dir, "store", "store.log"), Buffer.from([0, 0, 0, 40, 1, 2, 3]));
      const errors: unknown[] = [];
      const s2 = open(errors);
      expect((await s2.range("")).entries.map((e) => e.key)).toEqual(["a", "b"]);
      expect(String(errors[0])).toMatch(/dropped 7 unreadable bytes/);
      await s2.close();
      // The rewrite at open removed the tail: a third open has nothing to drop.
      const errors3: unknown[] = [];
      const s3 = open(errors3);
      expect(errors3).toEqual([]);
      await s3.close();
    });

    it("refuses a file that is not a store log rather than starting empty", () => {
      rmSync(join(dir, "store"), { recursive: true, force: true });
      const s = open();
      void s.close();
      writeFileSync(join(dir, "store", "store.log"), "something else entirely");
      expect(() => open()).toThrow(StoreError);
    });

    it("compacts the log as it grows", async () => {
      const s = open();
      const value = Buffer.alloc(100, 1);
      for (let i = 0; i < 5000; i++) await s.put("svccl/svccl/resources/hot", value);
      // 5000 records of ~150 bytes uncompacted; compaction keeps it near 1024 records at most.
      expect(statSync(join(dir, "store", "store.log")).size).toBeLessThan(1100 * 200);
      await s.close();
      const s2 = open();
      expect(await s2.get("svccl/svccl/resources/hot")).toMatchObject({ version: 5000 });
      await s2.close();
    });
  });

  describe("watch history", () => {
    it("refuses a start revision older than the kept history, and any before a reopen", async () => {
      const s = new MemoryStore({ dir: join(dir, "store"), watchHistory: 4 });
      const first = await s.put("h/0", b("0"));
      for (let i = 1; i < 20; i++) await s.put(`h/${i}`, b(String(i)));
      await expect(s.watch("h/", () => {}, { fromRevision: first })).rejects.toBeInstanceOf(StoreCompactedError);
      const rev = (await s.range("h/")).revision;
      const log = new EventLog();
      const w = await s.watch("h/", log.on, { fromRevision: rev });
      await log.until((evs) => evs.length === 1);
      expect(log.summary()).toEqual(["put h/19=19"]);
      await w.close();
      await s.close();

      const s2 = new MemoryStore({ dir: join(dir, "store") });
      await expect(s2.watch("h/", () => {}, { fromRevision: rev })).rejects.toBeInstanceOf(StoreCompactedError);
      const w2 = await s2.watch("h/", () => {}, { fromRevision: rev + 1 });
      await w2.close();
      await s2.close();
    });

    it("an expired lease deletes its keys at one revision and tells the holder", async () => {
      const s = new MemoryStore();
      const lease = await s.grantLease(30, { keepAlive: false });
      const lost = new Promise<Error>((resolve) => lease.onLost(resolve));
      await s.put("n/a", b("1"), { lease });
      await s.put("n/b", b("2"), { lease });
      const log = new EventLog();
      const w = await s.watch("n/", log.on);
      expect(String(await lost)).toMatch(/expired/);
      await log.until((evs) => evs.length === 2);
      expect(log.events[0].revision).toBe(log.events[1].revision);
      await w.close();
      await s.close();
    });
  });
});
