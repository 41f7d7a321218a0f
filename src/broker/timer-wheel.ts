// The broker's timers: one wheel of slots `resolution` ms wide, turned by the broker's sweep. A
// connection or session waits in the slot of its next deadline (idle timeout, keepalive, 3.x
// retransmission, await_rel_timeout, the end of a hold, session expiry) and is visited when that
// slot comes, not on every turn: a node holding 100,000 idle connections visits the few whose
// deadline came, instead of all of them every second. Deadlines are checked lazily: a keepalive
// deadline is not moved on every packet; when it comes, the channel looks at its last packet and
// waits again if the client spoke since.

/** Something the wheel calls back once its deadline came. */
export interface Timed {
  /** The wheel's bookkeeping: the slot this waits in (null while not scheduled). */
  wheelSlot: Set<Timed> | null;
  /** The wheel's bookkeeping: the slot number of that deadline. */
  wheelAt: number;
  /** The deadline came (`now`: ms since the epoch): act, or schedule again. */
  due(now: number): void;
}

export class TimerWheel {
  private readonly slots = new Map<number, Set<Timed>>();
  /** The first slot not yet fired. */
  private next: number;

  constructor(
    private readonly resolution: number,
    now: number = Date.now(),
  ) {
    this.next = Math.floor(now / resolution) + 1;
  }

  /** Entries waiting. */
  get size(): number {
    let n = 0;
    for (const s of this.slots.values()) n += s.size;
    return n;
  }

  /**
   * Calls `t.due()` on the first turn at or after `at` (ms since the epoch; a time already past:
   * on the next turn), in place of whatever `t` waited for before.
   */
  schedule(t: Timed, at: number): void {
    let k = Math.ceil(at / this.resolution);
    if (k < this.next) k = this.next;
    const old = t.wheelSlot;
    if (old !== null) {
      if (t.wheelAt === k) return;
      old.delete(t);
    }
    let slot = this.slots.get(k);
    if (slot === undefined) {
      slot = new Set();
      this.slots.set(k, slot);
    }
    slot.add(t);
    t.wheelSlot = slot;
    t.wheelAt = k;
  }

  /** Like schedule(), unless `t` already waits for a deadline no later than `at`. */
  scheduleBy(t: Timed, at: number): void {
    if (t.wheelSlot !== null && t.wheelAt * this.resolution <= at) return;
    this.schedule(t, at);
  }

  /** `t` waits for nothing any more. */
  cancel(t: Timed): void {
    const slot = t.wheelSlot;
    if (slot === null) return;
    slot.delete(t);
    t.wheelSlot = null;
  }

  /** One turn: every entry whose deadline is at or before `now` is called, in deadline order. */
  advance(now: number): void {
    const last = Math.floor(now / this.resolution);
    if (last < this.next) return;
    if (last - this.next > this.slots.size) {
      // A long gap (the clock jumped, the process was stopped): the waiting slots, not every one between.
      const due = [...this.slots.keys()].filter((k) => k <= last).sort((a, b) => a - b);
      this.next = last + 1;
      for (const k of due) this.fire(k, now);
      return;
    }
    while (this.next <= last) this.fire(this.next++, now);
  }

  private fire(k: number, now: number): void {
    const slot = this.slots.get(k);
    if (slot === undefined) return;
    this.slots.delete(k);
    // What due() schedules lands in a later slot (`next` is past this one already).
    for (const t of slot) {
      if (t.wheelSlot !== slot) continue;
      t.wheelSlot = null;
      t.due(now);
    }
  }
}
