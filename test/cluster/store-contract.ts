// The ClusterStore contract: one suite every implementation passes (the embedded MemoryStore and
// EtcdStore against a real etcd). Each test works under its own random prefix, so implementations
// backed by a shared server need no cleaning between tests.

import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ClusterStore, WatchEvent } from "../../src/cluster/store.ts";
import { LeaseNotFoundError, StoreClosedError } from "../../src/cluster/store-errors.ts";
import { getJson, putJson } from "../../src/cluster/store-json.ts";

export interface ContractOptions {
  /** A new store on the same data each call. */
  open: () => Promise<ClusterStore>;
  /** TTL of the leases under test (etcd counts whole seconds, 1 s at least). */
  leaseTtlMs: number;
  /** How long after its TTL an unrenewed lease may take to vanish (etcd: ~1.25 s for 1 s). */
  expirySlackMs: number;
}

const b = (s: string): Buffer => Buffer.from(s, "utf8");

/** Records watch events; `until` waits for a condition on them, failing after `ms`. */
export class EventLog {
  readonly events: WatchEvent[] = [];
  private readonly waiters: (() => void)[] = [];
  readonly on = (ev: WatchEvent): void => {
    this.events.push(ev);
    for (const w of this.waiters.splice(0)) w();
  };
  async until(pred: (evs: WatchEvent[]) => boolean, ms = 5000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!pred(this.events)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`watch: condition not met in ${ms} ms; got ${JSON.stringify(this.summary())}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }
  summary(): string[] {
    return this.events.map((e) => `${e.type} ${e.key}${e.type === "put" ? `=${e.value.toString()}` : ""}`);
  }
}

export function storeContract(name: string, opts: ContractOptions): void {
  describe(`${name}: ClusterStore contract`, () => {
    let store: ClusterStore;
    let p: string;

    beforeEach(async () => {
      store = await opts.open();
      p = `contract/${randomUUID()}/`;
    });
    afterEach(async () => {
      await store.close();
    });

    describe("put / get / delete", () => {
      it("writes, reads with revisions and versions, overwrites, deletes", async () => {
        expect(await store.get(`${p}k`)).toBeUndefined();
        const r1 = await store.put(`${p}k`, b("v1"));
        const e1 = await store.get(`${p}k`);
        expect(e1).toMatchObject({ key: `${p}k`, version: 1, createRevision: r1, modRevision: r1 });
        expect(e1?.value.toString()).toBe("v1");
        expect(e1?.lease).toBeUndefined();

        const r2 = await store.put(`${p}k`, b("v2"));
        expect(r2).toBeGreaterThan(r1);
        expect(await store.get(`${p}k`)).toMatchObject({ version: 2, createRevision: r1, modRevision: r2 });

        expect(await store.delete(`${p}k`)).toBe(true);
        expect(await store.get(`${p}k`)).toBeUndefined();
        expect(await store.delete(`${p}k`)).toBe(false);

        const r3 = await store.put(`${p}k`, b("again"));
        expect(await store.get(`${p}k`)).toMatchObject({ version: 1, createRevision: r3 });
      });

      it("stores bytes as given, empty values included", async () => {
        const bytes = Buffer.from([0, 255, 1, 128]);
        await store.put(`${p}bin`, bytes);
        await store.put(`${p}empty`, Buffer.alloc(0));
        expect((await store.get(`${p}bin`))?.value.equals(bytes)).toBe(true);
        expect((await store.get(`${p}empty`))?.value.length).toBe(0);
      });
    });

    describe("range", () => {
      it("returns the prefix's keys in byte order, nothing outside it", async () => {
        for (const k of ["b", "a/x", "c", "a", "\u{1F600}", "\uFFFD", "B"]) await store.put(`${p}r/${k}`, b(k));
        await store.put(`${p}r`, b("the prefix itself, without its slash"));
        await store.put(`${p}rz`, b("a sibling"));
        await store.put(`${p}q/a`, b("elsewhere"));
        const { entries, revision } = await store.range(`${p}r/`);
        // UTF-8 byte order: "B" < "a" < "a/x" < "b" < "c" < U+FFFD < U+1F600.
        expect(entries.map((e) => e.key.slice(`${p}r/`.length))).toEqual([
          "B",
          "a",
          "a/x",
          "b",
          "c",
          "\uFFFD",
          "\u{1F600}",
        ]);
        expect(entries.map((e) => e.value.toString())).toEqual(["B", "a", "a/x", "b", "c", "\uFFFD", "\u{1F600}"]);
        for (const e of entries) expect(e).toMatchObject({ version: 1, createRevision: e.modRevision });
        expect(revision).toBeGreaterThanOrEqual(Math.max(...entries.map((e) => e.modRevision)));
        expect((await store.range(`${p}nothing/`)).entries).toEqual([]);
      });

      it("deletePrefix removes the prefix's keys only", async () => {
        for (const k of ["d/1", "d/2", "d/3/x", "d", "dd/1"]) await store.put(`${p}${k}`, b(k));
        expect(await store.deletePrefix(`${p}d/`)).toBe(3);
        expect((await store.range(`${p}d/`)).entries).toEqual([]);
        expect((await store.range(p)).entries.map((e) => e.key)).toEqual([`${p}d`, `${p}dd/1`]);
        expect(await store.deletePrefix(`${p}d/`)).toBe(0);
      });
    });

    describe("txn", () => {
      it("creates if absent (version == 0) exactly once; the failure branch runs otherwise", async () => {
        const create = (who: string) =>
          store.txn({
            compare: [{ key: `${p}lock`, target: "version", op: "==", value: 0 }],
            success: [{ type: "put", key: `${p}lock`, value: b(who) }],
            failure: [{ type: "put", key: `${p}lost/${who}`, value: b("1") }],
          });
        expect(await create("a")).toBe(true);
        expect(await create("b")).toBe(false);
        expect((await store.get(`${p}lock`))?.value.toString()).toBe("a");
        expect((await store.range(`${p}lost/`)).entries.map((e) => e.key)).toEqual([`${p}lost/b`]);
      });

      it("compares values (equal, different, absent key) and swaps", async () => {
        await store.put(`${p}v`, b("one"));
        const swap = (from: string, to: string) =>
          store.txn({
            compare: [{ key: `${p}v`, target: "value", op: "==", value: b(from) }],
            success: [{ type: "put", key: `${p}v`, value: b(to) }],
          });
        expect(await swap("one", "two")).toBe(true);
        expect(await swap("one", "three")).toBe(false);
        expect((await store.get(`${p}v`))?.value.toString()).toBe("two");
        expect(await store.txn({ compare: [{ key: `${p}v`, target: "value", op: "!=", value: "two" }] })).toBe(false);
        expect(await store.txn({ compare: [{ key: `${p}v`, target: "value", op: "<", value: "zzz" }] })).toBe(true);
        // As in etcd, a value comparison with an absent key is false whatever the operator.
        expect(await store.txn({ compare: [{ key: `${p}none`, target: "value", op: "!=", value: "x" }] })).toBe(false);
      });

      it("compares mod, create revisions and versions (compare-and-swap on mod)", async () => {
        const r1 = await store.put(`${p}m`, b("1"));
        const r2 = await store.put(`${p}m`, b("2"));
        const cas = (mod: number, value: string) =>
          store.txn({
            compare: [{ key: `${p}m`, target: "mod", op: "==", value: mod }],
            success: [{ type: "put", key: `${p}m`, value: b(value) }],
          });
        expect(await cas(r1, "stale")).toBe(false);
        expect(await cas(r2, "3")).toBe(true);
        expect(await store.txn({ compare: [{ key: `${p}m`, target: "create", op: "==", value: r1 }] })).toBe(true);
        expect(await store.txn({ compare: [{ key: `${p}m`, target: "version", op: ">", value: 2 }] })).toBe(true);
        expect(await store.txn({ compare: [{ key: `${p}m`, target: "version", op: "<", value: 3 }] })).toBe(false);
        expect(await store.txn({ compare: [{ key: `${p}m`, target: "version", op: "!=", value: 0 }] })).toBe(true);
        expect(await store.txn({ compare: [{ key: `${p}none`, target: "mod", op: "==", value: 0 }] })).toBe(true);
      });

      it("applies all ops of a branch at one revision, only if every compare holds", async () => {
        await store.put(`${p}t/old`, b("x"));
        await store.put(`${p}t/gone/1`, b("x"));
        const ok = await store.txn({
          compare: [
            { key: `${p}t/old`, target: "version", op: "==", value: 1 },
            { key: `${p}t/new`, target: "version", op: "==", value: 0 },
          ],
          success: [
            { type: "put", key: `${p}t/new`, value: b("n") },
            { type: "put", key: `${p}t/new2`, value: b("n2") },
            { type: "delete", key: `${p}t/old` },
            { type: "deletePrefix", prefix: `${p}t/gone/` },
          ],
        });
        expect(ok).toBe(true);
        const { entries } = await store.range(`${p}t/`);
        expect(entries.map((e) => e.key)).toEqual([`${p}t/new`, `${p}t/new2`]);
        expect(entries[0].modRevision).toBe(entries[1].modRevision);

        const failed = await store.txn({
          compare: [
            { key: `${p}t/new`, target: "version", op: "==", value: 1 },
            { key: `${p}t/new2`, target: "version", op: "==", value: 0 },
          ],
          success: [{ type: "delete", key: `${p}t/new` }],
        });
        expect(failed).toBe(false);
        expect(await store.get(`${p}t/new`)).toBeDefined();
      });
    });

    describe("watch", () => {
      it("delivers puts and deletes under the prefix in revision order, then stops after close", async () => {
        const log = new EventLog();
        const w = await store.watch(`${p}w/`, log.on);
        const r1 = await store.put(`${p}w/a`, b("1"));
        await store.put(`${p}other`, b("not watched"));
        await store.put(`${p}w/b`, b("2"));
        await store.delete(`${p}w/a`);
        await store.txn({
          compare: [],
          success: [
            { type: "put", key: `${p}w/c`, value: b("3") },
            { type: "put", key: `${p}w/d`, value: b("4") },
          ],
        });
        await store.deletePrefix(`${p}w/`);
        await log.until((evs) => evs.length >= 8);
        expect(log.summary()).toEqual([
          `put ${p}w/a=1`,
          `put ${p}w/b=2`,
          `delete ${p}w/a`,
          `put ${p}w/c=3`,
          `put ${p}w/d=4`,
          `delete ${p}w/b`,
          `delete ${p}w/c`,
          `delete ${p}w/d`,
        ]);
        const revs = log.events.map((e) => e.revision);
        expect(revs[0]).toBe(r1);
        for (let i = 1; i < revs.length; i++) expect(revs[i]).toBeGreaterThanOrEqual(revs[i - 1]);
        expect(revs[3]).toBe(revs[4]); // one transaction, one revision
        expect(log.events[2].value.length).toBe(0);

        // After close, nothing more arrives: a second watcher sees a marker written later, the closed one never.
        await w.close();
        const witness = new EventLog();
        const w2 = await store.watch(`${p}w/`, witness.on);
        await store.put(`${p}w/after`, b("x"));
        await witness.until((evs) => evs.length === 1);
        expect(log.events.length).toBe(8);
        await w2.close();
      });

      it("starts from a past revision: range, then watch from its revision + 1 misses nothing", async () => {
        await store.put(`${p}h/1`, b("1"));
        const { entries, revision } = await store.range(`${p}h/`);
        expect(entries.length).toBe(1);
        await store.put(`${p}h/2`, b("2"));
        await store.delete(`${p}h/1`);
        const log = new EventLog();
        const w = await store.watch(`${p}h/`, log.on, { fromRevision: revision + 1 });
        await store.put(`${p}h/3`, b("3"));
        await log.until((evs) => evs.length >= 3);
        expect(log.summary()).toEqual([`put ${p}h/2=2`, `delete ${p}h/1`, `put ${p}h/3=3`]);
        await w.close();
      });

      it("keeps delivering when a callback throws or writes", async () => {
        const log = new EventLog();
        const errors: unknown[] = [];
        const w = await store.watch(`${p}x/`, (ev) => {
          log.on(ev);
          if (ev.key.endsWith("/boom")) {
            void store.put(`${p}x/echo`, b("from the callback")).catch((e) => errors.push(e));
            throw new Error("a broken callback");
          }
        });
        await store.put(`${p}x/boom`, b("1"));
        await store.put(`${p}x/next`, b("2"));
        await log.until((evs) => evs.length >= 3);
        expect(log.summary().sort()).toEqual([
          `put ${p}x/boom=1`,
          `put ${p}x/echo=from the callback`,
          `put ${p}x/next=2`,
        ]);
        expect(errors).toEqual([]);
        await w.close();
      });
    });

    describe("leases", () => {
      it("a key under an unrenewed lease vanishes after the TTL and watchers see the delete", async () => {
        const log = new EventLog();
        const w = await store.watch(`${p}l/`, log.on);
        const start = Date.now();
        const lease = await store.grantLease(opts.leaseTtlMs, { keepAlive: false });
        expect(lease.ttlMs).toBeGreaterThanOrEqual(opts.leaseTtlMs);
        await store.put(`${p}l/node`, b("up"), { lease });
        await store.put(`${p}l/plain`, b("stays"));
        expect((await store.get(`${p}l/node`))?.lease).toBe(lease.id);
        await log.until((evs) => evs.some((e) => e.type === "delete"), lease.ttlMs + opts.expirySlackMs + 2000);
        const elapsed = Date.now() - start;
        expect(elapsed).toBeGreaterThanOrEqual(lease.ttlMs - 5);
        expect(log.events.filter((e) => e.type === "delete").map((e) => e.key)).toEqual([`${p}l/node`]);
        expect(await store.get(`${p}l/node`)).toBeUndefined();
        expect(await store.get(`${p}l/plain`)).toBeDefined();
        await expect(store.put(`${p}l/late`, b("x"), { lease })).rejects.toBeInstanceOf(LeaseNotFoundError);
        await w.close();
      });

      it("revoke deletes the lease's keys at once", async () => {
        const log = new EventLog();
        const w = await store.watch(`${p}rv/`, log.on);
        const lease = await store.grantLease(opts.leaseTtlMs * 30);
        await store.put(`${p}rv/a`, b("1"), { lease });
        await store.txn({ compare: [], success: [{ type: "put", key: `${p}rv/b`, value: b("2"), lease }] });
        await lease.revoke();
        expect((await store.range(`${p}rv/`)).entries).toEqual([]);
        await log.until((evs) => evs.filter((e) => e.type === "delete").length === 2, 3000);
        expect(
          log.events
            .filter((e) => e.type === "delete")
            .map((e) => e.key)
            .sort(),
        ).toEqual([`${p}rv/a`, `${p}rv/b`]);
        await expect(store.put(`${p}rv/c`, b("x"), { lease })).rejects.toBeInstanceOf(LeaseNotFoundError);
        await w.close();
      });

      it("a put without the lease detaches the key from it", async () => {
        const lease = await store.grantLease(opts.leaseTtlMs * 30);
        await store.put(`${p}d/k`, b("leased"), { lease });
        await store.put(`${p}d/k`, b("plain"));
        await lease.revoke();
        expect((await store.get(`${p}d/k`))?.value.toString()).toBe("plain");
      });

      it("keep-alive keeps the lease and its keys past several TTLs", async () => {
        const lease = await store.grantLease(opts.leaseTtlMs);
        let lost = false;
        lease.onLost(() => {
          lost = true;
        });
        await store.put(`${p}ka/k`, b("alive"), { lease });
        // What is under test is time passing: three TTLs, where an unrenewed lease lives one (+ slack).
        await new Promise((r) => setTimeout(r, Math.max(lease.ttlMs * 3, lease.ttlMs + opts.expirySlackMs * 2)));
        expect((await store.get(`${p}ka/k`))?.value.toString()).toBe("alive");
        expect(lost).toBe(false);
        await lease.revoke();
        expect(await store.get(`${p}ka/k`)).toBeUndefined();
      }, 20_000);
    });

    describe("JSON helpers and closing", () => {
      it("putJson / getJson round-trip objects; an absent key reads undefined", async () => {
        const rule = { id: "rule:1", sql: 'SELECT * FROM "t/#"', enabled: true, actions: [{ name: "do_nothing" }] };
        await putJson(store, `${p}rules/rule:1`, rule);
        expect(await getJson(store, `${p}rules/rule:1`)).toEqual(rule);
        expect((await store.get(`${p}rules/rule:1`))?.value.toString()).toBe(JSON.stringify(rule));
        expect(await getJson(store, `${p}rules/none`)).toBeUndefined();
      });

      it("a closed store refuses every call with StoreClosedError", async () => {
        const s = await opts.open();
        await s.close();
        await expect(s.get(`${p}k`)).rejects.toBeInstanceOf(StoreClosedError);
        await expect(s.put(`${p}k`, b("v"))).rejects.toBeInstanceOf(StoreClosedError);
        await expect(s.watch(p, () => {})).rejects.toBeInstanceOf(StoreClosedError);
        await expect(s.grantLease(1000)).rejects.toBeInstanceOf(StoreClosedError);
        await s.close();
      });
    });
  });
}
