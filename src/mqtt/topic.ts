// Topic names and topic filters: validation, wildcard matching and shared
// subscription parsing. Pure functions, no regex, no allocation on the
// validate/match paths.
//
// Spec references (MQTT 5.0 tags; 3.1.1 has the same rules in section 4.7):
//   4.7     No wildcards in Topic Names [MQTT-4.7.0-1], [MQTT-3.3.2-2]
//   4.7.1   Topic wildcards: '#' [MQTT-4.7.1-1], '+' [MQTT-4.7.1-2]
//   4.7.2   Topics beginning with '$' [MQTT-4.7.2-1]
//   4.7.3   Topic semantic and usage [MQTT-4.7.3-1..-4]
//   4.8.2   Shared subscriptions ($share/<ShareName>/<filter>) [MQTT-4.8.2-1..-2]
//   1.5.4   UTF-8 encoded strings [MQTT-1.5.4-1], [MQTT-1.5.4-2]
// `$queue/<filter>` is the non-standard (EMQX style) shared form with the
// implicit group `$queue`.

const SLASH = 0x2f; // '/'
const PLUS = 0x2b; // '+'
const HASH = 0x23; // '#'
const DOLLAR = 0x24; // '$'
const NUL = 0x00;

/** Maximum length in bytes of an MQTT UTF-8 encoded string (1.5.4). */
export const MAX_TOPIC_BYTES = 65535;

export const SHARE_PREFIX = "$share/";
export const QUEUE_PREFIX = "$queue/";
/** Group name reported by {@link parseSharedFilter} for `$queue/<filter>`. */
export const QUEUE_GROUP = "$queue";

/**
 * Scans `s` from `start`; returns the UTF-8 byte length of s[start..] or -1
 * when it contains U+0000 or a lone surrogate [MQTT-1.5.4-1], [MQTT-1.5.4-2].
 * Stops early (returning a value > MAX_TOPIC_BYTES) once the limit is passed.
 */
function scanUtf8(s: string, start: number): number {
  let bytes = 0;
  const n = s.length;
  for (let i = start; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) {
      if (c === NUL) return -1; // [MQTT-1.5.4-2] / [MQTT-4.7.3-2]
      bytes += 1;
    } else if (c < 0x800) {
      bytes += 2;
    } else if (c >= 0xd800 && c <= 0xdfff) {
      // Surrogates are only valid as a high+low pair (one 4-byte code point).
      if (c > 0xdbff || i + 1 >= n) return -1; // [MQTT-1.5.4-1]
      const d = s.charCodeAt(i + 1);
      if (d < 0xdc00 || d > 0xdfff) return -1; // [MQTT-1.5.4-1]
      i++;
      bytes += 4;
    } else {
      bytes += 3;
    }
    if (bytes > MAX_TOPIC_BYTES) return bytes;
  }
  return bytes;
}

/** UTF-8 byte length of `s` (lone surrogates count as 3, like Buffer). */
export function utf8ByteLength(s: string): number {
  let bytes = 0;
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        i++;
        bytes += 4;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * Topic Name of a PUBLISH: non-empty [MQTT-4.7.3-1], no wildcard characters
 * [MQTT-3.3.2-2], no U+0000 [MQTT-4.7.3-2], well-formed UTF-8 of at most
 * 65535 bytes [MQTT-4.7.3-3], at most `maxLevels` levels when maxLevels > 0.
 */
export function validateTopicName(name: string, maxLevels: number): boolean {
  const n = name.length;
  if (n === 0 || n > MAX_TOPIC_BYTES) return false; // [MQTT-4.7.3-1], [MQTT-4.7.3-3]
  let levels = 1;
  for (let i = 0; i < n; i++) {
    const c = name.charCodeAt(i);
    if (c === SLASH) levels++;
    else if (c === PLUS || c === HASH) return false; // [MQTT-3.3.2-2], [MQTT-4.7.0-1]
  }
  if (maxLevels > 0 && levels > maxLevels) return false;
  const bytes = scanUtf8(name, 0);
  return bytes >= 0 && bytes <= MAX_TOPIC_BYTES; // [MQTT-4.7.3-2], [MQTT-4.7.3-3]
}

/**
 * Structural check of a plain (non-shared) filter in filter[start..]:
 * non-empty [MQTT-4.7.3-1], wildcard placement [MQTT-4.7.1-1],
 * [MQTT-4.7.1-2], level limit. Character data is checked by the caller.
 */
function checkPlainFilter(filter: string, start: number, maxLevels: number): boolean {
  const n = filter.length;
  if (start >= n) return false; // [MQTT-4.7.3-1]
  let levels = 1;
  let levelStart = true;
  for (let i = start; i < n; i++) {
    const c = filter.charCodeAt(i);
    if (c === SLASH) {
      levels++;
      levelStart = true;
      continue;
    }
    if (c === HASH) {
      // '#' must occupy a whole level and be the last character [MQTT-4.7.1-1]
      if (!levelStart || i !== n - 1) return false;
    } else if (c === PLUS) {
      // '+' must occupy an entire level [MQTT-4.7.1-2]
      if (!levelStart) return false;
      if (i + 1 < n && filter.charCodeAt(i + 1) !== SLASH) return false;
    }
    levelStart = false;
  }
  return maxLevels <= 0 || levels <= maxLevels;
}

/**
 * Topic Filter of a SUBSCRIBE/UNSUBSCRIBE. Accepts `$share/<group>/<filter>`
 * (group non-empty [MQTT-4.8.2-1], without '/', '+', '#', followed by '/'
 * and a non-empty valid filter [MQTT-4.8.2-2]) and `$queue/<filter>`. The level limit
 * applies to the inner filter of shared forms; the NUL / UTF-8 / 65535-byte
 * checks apply to the whole string [MQTT-4.7.3-2], [MQTT-4.7.3-3].
 */
export function validateTopicFilter(filter: string, maxLevels: number): boolean {
  const n = filter.length;
  if (n === 0 || n > MAX_TOPIC_BYTES) return false; // [MQTT-4.7.3-1], [MQTT-4.7.3-3]
  const inner = sharedInnerStart(filter);
  if (inner === -1) return false; // [MQTT-4.8.2-1], [MQTT-4.8.2-2]
  if (!checkPlainFilter(filter, inner, maxLevels)) return false;
  const bytes = scanUtf8(filter, 0);
  return bytes >= 0 && bytes <= MAX_TOPIC_BYTES; // [MQTT-4.7.3-2], [MQTT-4.7.3-3]
}

function startsWithAt(s: string, prefix: string): boolean {
  const n = prefix.length;
  if (s.length < n) return false;
  for (let i = 0; i < n; i++) if (s.charCodeAt(i) !== prefix.charCodeAt(i)) return false;
  return true;
}

/**
 * A topic name or filter starting with '$': such a topic is matched by no filter starting with a
 * wildcard [MQTT-4.7.2-1]; shared forms (`$share/`, `$queue/`) start with it too.
 */
export function startsWithDollar(s: string): boolean {
  return s.charCodeAt(0) === DOLLAR;
}

/**
 * Index where the inner filter starts: 0 for a plain filter, > 0 for a
 * well-formed shared prefix, -1 for a malformed `$share/...` or `$queue/`
 * form (empty group, group with '+'/'#', or no inner filter)
 * [MQTT-4.8.2-1], [MQTT-4.8.2-2].
 */
export function sharedInnerStart(filter: string): number {
  if (!startsWithDollar(filter)) return 0;
  if (startsWithAt(filter, SHARE_PREFIX)) {
    const n = filter.length;
    const g = SHARE_PREFIX.length;
    let i = g;
    for (; i < n; i++) {
      const c = filter.charCodeAt(i);
      if (c === SLASH) break;
      if (c === PLUS || c === HASH) return -1; // [MQTT-4.8.2-2]
    }
    if (i === g) return -1; // ShareName at least one character [MQTT-4.8.2-1]
    if (i >= n) return -1; // ShareName MUST be followed by '/' [MQTT-4.8.2-2]
    return i + 1 < n ? i + 1 : -1; // ... and '/' by a Topic Filter [MQTT-4.8.2-2]
  }
  if (startsWithAt(filter, QUEUE_PREFIX)) {
    return filter.length > QUEUE_PREFIX.length ? QUEUE_PREFIX.length : -1;
  }
  return 0;
}

/** True when `filter` contains '+' or '#' as a whole level (4.7.1). */
export function isWildcard(filter: string): boolean {
  const n = filter.length;
  let levelStart = true;
  for (let i = 0; i < n; i++) {
    const c = filter.charCodeAt(i);
    if (c === SLASH) {
      levelStart = true;
      continue;
    }
    if (levelStart && (c === PLUS || c === HASH)) {
      if (i + 1 === n || filter.charCodeAt(i + 1) === SLASH) return true;
    }
    levelStart = false;
  }
  return false;
}

/**
 * MQTT topic matching of a (valid, non-shared) filter against a topic name.
 * - '+' matches exactly one level, which may be empty (4.7.1.3).
 * - '#' matches the parent level and any number of child levels
 *   (`sport/#` matches `sport`) (4.7.1.2).
 * - No normalization of either string [MQTT-4.7.3-4].
 * - A filter starting with '+' or '#' never matches a topic starting with
 *   '$' [MQTT-4.7.2-1].
 * The filter is assumed valid: a '#' level is treated as the end of the filter.
 */
export function matchTopic(filter: string, topic: string): boolean {
  const flen = filter.length;
  const tlen = topic.length;
  if (flen > 0 && tlen > 0 && startsWithDollar(topic)) {
    const f0 = filter.charCodeAt(0);
    if (f0 === PLUS || f0 === HASH) return false; // [MQTT-4.7.2-1]
  }
  let fi = 0;
  let ti = 0;
  for (;;) {
    // Both indexes are at the start of a level.
    const fc = fi < flen ? filter.charCodeAt(fi) : -1;
    if (fc === HASH) return true; // 4.7.1.2
    if (fc === PLUS) {
      // 4.7.1.3: one whole (possibly empty) level
      fi++;
      while (ti < tlen && topic.charCodeAt(ti) !== SLASH) ti++;
    } else {
      while (fi < flen) {
        const c = filter.charCodeAt(fi);
        if (c === SLASH) break;
        if (ti >= tlen || topic.charCodeAt(ti) !== c) return false;
        fi++;
        ti++;
      }
      if (ti < tlen && topic.charCodeAt(ti) !== SLASH) return false;
    }
    // fi and ti are each at a '/' or at the end.
    if (fi >= flen) return ti >= tlen;
    if (ti >= tlen) {
      // Topic exhausted: only a trailing "/#" still matches (parent level).
      return fi + 2 === flen && filter.charCodeAt(fi + 1) === HASH; // 4.7.1.2
    }
    fi++;
    ti++;
  }
}

/**
 * Splits a shared subscription filter. `$share/g/a/b` gives
 * `{ group: "g", filter: "a/b" }` (4.8.2); `$queue/a` gives
 * `{ group: "$queue", filter: "a" }`. Returns null for a non-shared filter
 * and for a malformed shared form (`$share/g`, `$share//x`, `$queue/`).
 */
export function parseSharedFilter(filter: string): { group: string; filter: string } | null {
  if (!startsWithDollar(filter)) return null;
  const inner = sharedInnerStart(filter);
  if (inner <= 0) return null;
  if (inner === QUEUE_PREFIX.length && startsWithAt(filter, QUEUE_PREFIX)) {
    return { group: QUEUE_GROUP, filter: filter.slice(inner) };
  }
  return { group: filter.slice(SHARE_PREFIX.length, inner - 1), filter: filter.slice(inner) };
}

/** Number of levels ('/' count + 1); "" and "a" have 1, "/" has 2. */
export function topicLevels(topic: string): number {
  let levels = 1;
  for (let i = topic.length - 1; i >= 0; i--) if (topic.charCodeAt(i) === SLASH) levels++;
  return levels;
}
