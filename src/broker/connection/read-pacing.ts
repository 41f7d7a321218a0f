// Young collections paced by socket reads. Every socket read lands in a new ArrayBuffer, memory V8
// counts as external. Those buffers die young, but only a scavenge frees them, and scavenges come
// as the young generation fills with JS objects, which large payloads hardly do: at 16 KB a
// message, read buffers pile up by hundreds of MB per second between two scavenges and V8 answers
// with full mark-compacts of the whole heap instead. The process entry (gc-tuning.ts, applied by
// svc start) installs a young collection every few MB read, which frees them at the cost of a
// scavenge of what little is alive; a broker embedded without it pays one comparison per read.

let every = 0;
let since = 0;
let collect: (() => void) | null = null;

/** Runs `fn` after every `bytes` read from MQTT connections and inter-node links (null: none). */
export function collectEvery(bytes: number, fn: (() => void) | null): void {
  every = bytes;
  since = 0;
  collect = fn;
}

/** Counts `n` bytes read from a socket (Connection.onData, the cluster link's connection). */
export function bytesRead(n: number): void {
  if (collect === null) return;
  since += n;
  if (since >= every) {
    since = 0;
    collect();
  }
}
