// The Variable Byte Integer (MQTT 5.0 section 1.5.5): a remaining length or a property length in
// one to four bytes of seven bits each, the high bit telling whether another byte follows.

/** Bytes that `n` (at most 268,435,455) takes. */
export function varLen(n: number): number {
  return n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : 4;
}

/** Writes `n` at `at`; returns where the next field starts. */
export function writeVar(buf: Buffer, at: number, n: number): number {
  let x = n;
  do {
    let b = x & 0x7f;
    x >>>= 7;
    if (x > 0) b |= 0x80;
    buf[at++] = b;
  } while (x > 0);
  return at;
}
