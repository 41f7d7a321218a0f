// Copies of small byte ranges on the message path: Buffer.allocUnsafe and a TypedArray set, less
// work than Buffer.from(view) or Buffer#copy (both go through more JavaScript before the native
// copy: measured at about 60 against 70 ns for 160 bytes).

/** A copy of `bytes` in a Buffer of its own (from the pool when small). */
export function copyOf(bytes: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(bytes.length);
  out.set(bytes);
  return out;
}

/**
 * A copy of `bytes` in memory of its own, exactly its size (never a pool slice). For bytes kept
 * long: a payload read off a socket is a view of a larger read buffer (a pool slab, or a whole
 * burst of packets), all of which a kept view would hold on to.
 */
export function ownCopyOf(bytes: Uint8Array): Buffer {
  const out = Buffer.allocUnsafeSlow(bytes.length);
  out.set(bytes);
  return out;
}

/** `first` and `more` (`bytes` long in all) copied into one buffer (from the pool when small). */
export function joinBytes(first: Uint8Array, more: readonly Uint8Array[], bytes: number): Buffer {
  const out = Buffer.allocUnsafe(bytes);
  out.set(first, 0);
  let at = first.length;
  for (let i = 0; i < more.length; i++) {
    const b = more[i];
    out.set(b, at);
    at += b.length;
  }
  return out;
}
