// Placeholders of the database providers (svc_auth_mysql, _pgsql, _redis, _mongo; emqx-facts §5):
// `%u` user name, `%c` client id, `%a` peer address, `%C` certificate CN, `%d` certificate DN.
//
// Values never become query text:
// - SQL: a placeholder written as a whole quoted literal (`'%u'`, the family's form) or bare outside
//   any literal (`%u`) becomes a bound parameter (`$1`, `$2`... for PostgreSQL, `?` for MySQL).
//   A `%u` inside a longer literal (`'a%u'`, `'%user%'`) is text, as in the family.
// - Redis: the command is split into words once; a placeholder inside a word is replaced in that
//   word, which is sent as one argument (no value can add or split arguments).
// - Mongo: `field=value` selectors become a document whose values are strings.

import type { ClientInfo } from "../broker/types.ts";

export const PLACEHOLDERS = ["u", "c", "a", "C", "d"] as const;
export type Placeholder = (typeof PLACEHOLDERS)[number];

const ANY = /%([ucaCd])/g;

/** The value of a placeholder for a client; undefined when the client has none. */
export function placeholderValue(p: Placeholder, c: ClientInfo): string | undefined {
  switch (p) {
    case "u":
      return c.username;
    case "c":
      return c.clientId;
    case "a":
      return c.peerHost;
    case "C":
      return c.peerCert?.cn;
    case "d":
      return c.peerCert?.dn;
  }
}

// ---- SQL --------------------------------------------------------------------------------------------

export type SqlDialect = "pgsql" | "mysql";

export interface BoundSql {
  /** The statement with parameter markers. */
  text: string;
  /** Which placeholder fills each parameter, in order. */
  params: Placeholder[];
}

/**
 * Turns a query with placeholders into a statement with bound parameters. Quoted literals ('...',
 * with '' or, for MySQL, backslash escapes) and double-quoted / back-quoted identifiers are kept.
 * Throws on an unterminated literal.
 */
export function bindSql(sql: string, dialect: SqlDialect): BoundSql {
  const params: Placeholder[] = [];
  const marker = (p: Placeholder) => {
    params.push(p);
    return dialect === "pgsql" ? `$${params.length}` : "?";
  };
  let out = "";
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i];
    if (ch === "'" || ch === '"' || ch === "`") {
      const end = literalEnd(sql, i, dialect);
      if (end < 0) throw new Error(`unterminated ${ch === "'" ? "string literal" : "identifier"} in "${sql}"`);
      const lit = sql.slice(i, end + 1);
      const m = ch === "'" ? /^'%([ucaCd])'$/.exec(lit) : null;
      out += m !== null ? marker(m[1] as Placeholder) : lit;
      i = end + 1;
      continue;
    }
    if (ch === "%" && i + 1 < sql.length && (PLACEHOLDERS as readonly string[]).includes(sql[i + 1])) {
      out += marker(sql[i + 1] as Placeholder);
      i += 2;
      continue;
    }
    out += ch;
    i++;
  }
  return { text: out, params };
}

/** Index of the quote closing the literal opened at `start`, or -1. */
function literalEnd(sql: string, start: number, dialect: SqlDialect): number {
  const q = sql[start];
  for (let j = start + 1; j < sql.length; j++) {
    const c = sql[j];
    if (c === "\\" && q === "'" && dialect === "mysql") {
      j++;
      continue;
    }
    if (c === q) {
      if (sql[j + 1] === q) {
        j++;
        continue;
      }
      return j;
    }
  }
  return -1;
}

/** The parameter values of a bound statement for a client (null where the client has none). */
export function sqlValues(b: BoundSql, c: ClientInfo): (string | null)[] {
  return b.params.map((p) => placeholderValue(p, c) ?? null);
}

// ---- Redis --------------------------------------------------------------------------------------------

/** A Redis command as words (the command name first); throws when empty. */
export function parseRedisCommand(text: string): string[] {
  const words = text
    .trim()
    .split(/\s+/)
    .filter((w) => w !== "");
  if (words.length === 0) throw new Error("empty command");
  return words;
}

/** Replaces the placeholders of `text`; undefined when one has no value for the client. */
export function fillPlaceholders(text: string, c: ClientInfo): string | undefined {
  let missing = false;
  const out = text.replace(ANY, (_m, p: string) => {
    const v = placeholderValue(p as Placeholder, c);
    if (v === undefined) missing = true;
    return v ?? "";
  });
  return missing ? undefined : out;
}

/** The command's arguments for a client; undefined when a placeholder has no value (no query). */
export function redisArgs(words: readonly string[], c: ClientInfo): string[] | undefined {
  const out: string[] = [];
  for (const w of words) {
    const v = fillPlaceholders(w, c);
    if (v === undefined) return undefined;
    out.push(v);
  }
  return out;
}

// ---- Mongo --------------------------------------------------------------------------------------------

/** `username=%u,clientid=%c` as [field, value template] pairs; throws on a pair without `=`. */
export function parseSelector(text: string): [string, string][] {
  const out: [string, string][] = [];
  for (const part of text.split(",")) {
    const p = part.trim();
    if (p === "") continue;
    const eq = p.indexOf("=");
    if (eq <= 0) throw new Error(`invalid selector "${p}" (expected field=value)`);
    const field = p.slice(0, eq).trim();
    if (field.startsWith("$")) throw new Error(`invalid selector field "${field}" (operators are not allowed)`);
    out.push([field, p.slice(eq + 1).trim()]);
  }
  if (out.length === 0) throw new Error("empty selector");
  return out;
}

/** The selector document for a client; undefined when a placeholder has no value (no query). */
export function selectorDoc(pairs: readonly [string, string][], c: ClientInfo): Record<string, string> | undefined {
  const doc: Record<string, string> = {};
  for (const [field, tpl] of pairs) {
    const v = fillPlaceholders(tpl, c);
    if (v === undefined) return undefined;
    doc[field] = v;
  }
  return doc;
}
