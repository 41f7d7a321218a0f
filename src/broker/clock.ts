// The broker's wall clock on the message path. Reading the clock costs about 40 ns here (as much as
// routing a message to a subscriber), and a socket read can hold hundreds of packets: while a read
// is handled (Connection.onData), now() answers the time it was read, taken once; elsewhere (timers,
// the API, rules after an await) it reads the clock. Packets of one read arrived at the same time,
// so their timestamps, expiry checks and retry times stay exact to the millisecond.

let readAt = 0;

/** Milliseconds since the epoch: the current read's time inside one, the clock's otherwise. */
export function now(): number {
  return readAt !== 0 ? readAt : Date.now();
}

/** A socket read begins: now() is its time until readDone(), which gets what this returns. */
export function readBegins(): number {
  const outer = readAt;
  readAt = Date.now();
  return outer;
}

/** The read's packets are handled (`outer`: what readBegins() returned). */
export function readDone(outer: number): void {
  readAt = outer;
}
