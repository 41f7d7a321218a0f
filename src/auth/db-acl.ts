// ACL rules kept in the databases of the providers (emqx-facts §5), turned into the rule shape of
// the ACL file (acl-file.ts) so they match the same way (`%u`/`%c` levels, `eq ` exact marker):
//
// - SQL (`acl_query` rows `allow, ipaddr, username, clientid, access, topic`): allow 1 / 0 (true /
//   false), access 1 subscribe, 2 publish, 3 pubsub; the identity is `all` for the user name
//   `$all`, else the set columns (ipaddr as CIDR, username, clientid), all of them required. The
//   first matching row decides; no matching row: no opinion.
// - Redis (`HGETALL mqtt_acl:%u`: topic -> 1 subscribe, 2 publish, 3 pubsub) and Mongo (documents
//   with `publish`, `subscribe`, `pubsub` arrays of topics): allow rules; a client with rules of
//   which none matches is denied, a client without any: no opinion.

import type { AclAccess, AclRule, AclTopic, AclWho } from "./acl-file.ts";
import { parseCidr } from "./acl-file.ts";

export interface DbAclRules {
  rules: AclRule[];
  /** Entries that could not be read, as `<source>: <why>`. */
  bad: string[];
}

const ACCESS: Readonly<Record<string, AclAccess>> = { "1": "subscribe", "2": "publish", "3": "pubsub" };

/** `eq t/#` = exactly this filter; otherwise a filter, with `%u`/`%c` levels filled at match time. */
export function dbTopic(text: string): AclTopic | undefined {
  const t = text.trim();
  if (t.startsWith("eq ")) {
    const topic = t.slice(3).trim();
    return topic === "" ? undefined : { kind: "eq", topic };
  }
  if (t === "") return undefined;
  return { kind: "filter", filter: t, vars: t.split("/").some((l) => l === "%u" || l === "%c") };
}

function text(v: unknown): string | undefined {
  if (v === null || v === undefined) return undefined;
  const s = Buffer.isBuffer(v) ? v.toString("utf8") : String(v);
  return s.trim() === "" ? undefined : s.trim();
}

function permissionOf(v: unknown): "allow" | "deny" | undefined {
  const s = text(v)?.toLowerCase();
  if (s === "1" || s === "true" || s === "t") return "allow";
  if (s === "0" || s === "false" || s === "f") return "deny";
  return undefined;
}

function whoOf(row: Record<string, unknown>): AclWho | string {
  const username = text(row.username);
  if (username === "$all") return { kind: "all" };
  const list: AclWho[] = [];
  const ip = text(row.ipaddr);
  if (ip !== undefined) {
    const cidr = parseCidr(ip);
    if (typeof cidr === "string") return cidr;
    list.push({ kind: "ipaddr", cidrs: [cidr] });
  }
  if (username !== undefined) list.push({ kind: "user", name: username });
  const clientid = text(row.clientid);
  if (clientid !== undefined) list.push({ kind: "client", id: clientid });
  if (list.length === 0) return "no ipaddr, username or clientid";
  return list.length === 1 ? list[0] : { kind: "and", list };
}

/** SQL `acl_query` rows (objects by column name, in the order returned). */
export function sqlAclRules(rows: readonly Record<string, unknown>[], source: string): DbAclRules {
  const rules: AclRule[] = [];
  const bad: string[] = [];
  rows.forEach((row, i) => {
    const where = `${source} row ${i + 1}`;
    const permission = permissionOf(row.allow);
    const access = ACCESS[text(row.access) ?? ""];
    const topic = dbTopic(text(row.topic) ?? "");
    const who = whoOf(row);
    if (permission === undefined) bad.push(`${where}: allow must be 1 or 0`);
    else if (access === undefined) bad.push(`${where}: access must be 1, 2 or 3`);
    else if (topic === undefined) bad.push(`${where}: empty topic`);
    else if (typeof who === "string") bad.push(`${where}: ${who}`);
    else rules.push({ permission, who, access, topics: [topic], source: where });
  });
  return { rules, bad };
}

/** A Redis ACL hash (`topic -> access`). */
export function redisAclRules(hash: Readonly<Record<string, string>>, source: string): DbAclRules {
  const rules: AclRule[] = [];
  const bad: string[] = [];
  for (const [field, value] of Object.entries(hash)) {
    const where = `${source} ${field}`;
    const access = ACCESS[value.trim()];
    const topic = dbTopic(field);
    if (access === undefined) bad.push(`${where}: access must be 1, 2 or 3, not "${value}"`);
    else if (topic === undefined) bad.push(`${where}: empty topic`);
    else rules.push({ permission: "allow", who: { kind: "all" }, access, topics: [topic], source: where });
  }
  return { rules, bad };
}

/** Mongo ACL documents: `publish`, `subscribe` and `pubsub` arrays of topics. */
export function mongoAclRules(docs: readonly Record<string, unknown>[], source: string): DbAclRules {
  const rules: AclRule[] = [];
  const bad: string[] = [];
  docs.forEach((doc, i) => {
    for (const access of ["publish", "subscribe", "pubsub"] as const) {
      const list = doc[access];
      if (list === undefined || list === null) continue;
      const where = `${source} document ${i + 1} ${access}`;
      if (!Array.isArray(list)) {
        bad.push(`${where}: not an array`);
        continue;
      }
      const topics: AclTopic[] = [];
      for (const t of list) {
        const topic = typeof t === "string" ? dbTopic(t) : undefined;
        if (topic === undefined) bad.push(`${where}: ${JSON.stringify(t)} is not a topic`);
        else topics.push(topic);
      }
      if (topics.length > 0) rules.push({ permission: "allow", who: { kind: "all" }, access, topics, source: where });
    }
  });
  return { rules, bad };
}
