// Key order and prefix ranges as etcd sees them: keys are UTF-8 bytes compared bytewise, and a
// prefix range ends at the prefix with its last byte incremented. Both stores sort the same way.

/**
 * Compares two keys in UTF-8 byte order (= code point order). JavaScript's `<` compares UTF-16
 * code units, which differs only when a surrogate pair meets a code unit in U+E000..U+FFFF.
 */
export function compareKeys(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      x = fixup(x);
      y = fixup(y);
    }
    return x - y;
  }
  return a.length - b.length;
}

/** Surrogates sort after U+E000..U+FFFF in code point order. */
function fixup(c: number): number {
  return c >= 0xe000 ? c - 0x800 : c + 0x2000;
}

/** The exclusive end of the range of keys starting with `prefix` (etcd `range_end`). */
export function prefixRangeEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i] < 0xff) {
      end[i]++;
      return end.subarray(0, i + 1);
    }
  }
  // Empty prefix, or all 0xff bytes: to the end of the key space.
  return Buffer.from([0]);
}
