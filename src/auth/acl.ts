// Access control (spec section 5 "Access control", emqx-facts §5): a built-in feature, as in the
// family (`acl_file` is a node setting), started by main.ts after $SYS. It owns the one callback on
// the `client.check_acl` fold (PRIORITY.acl) and decides every publish and subscribe:
//
// 1. zones with `enable_acl = off` are not checked (the core's start value, allow, stands);
// 2. the client's ACL cache answers when it holds the decision (`enable_acl_cache`);
// 3. ACL sources of the authentication providers that carry rules (http, jwt, databases), in the
//    order they were added, then the rules of `acl_file` (first match wins), then `acl_nomatch`.
//
// Superusers never get here (the core skips them). A `$share/<g>/` or `$queue/` prefix is taken
// off a subscription's filter before the check. The file's default rules hold the $SYS rule the
// built-in guard (sys/sys-guard.ts) stood in for, so the guard is removed when the ACL starts; only
// while no rule file could be read does the guard's rule apply, before `acl_nomatch`. The file can
// be reloaded at run time (`reload`): clients stay connected, every ACL cache is emptied.

import { BlockList, isIP } from "node:net";
import type { Broker } from "../broker/broker.ts";
import type { AclAction, AclResult } from "../broker/hookpoints.ts";
import { metricIndex } from "../broker/metrics.ts";
import type { ClientInfo } from "../broker/types.ts";
import { stop } from "../hooks/hooks.ts";
import { PRIORITY } from "../hooks/priorities.ts";
import { matchTopic, parseSharedFilter } from "../mqtt/topic.ts";
import { removeSysGuard, sysGuard } from "../sys/sys-guard.ts";
import { type AclCacheEntry, AclCaches } from "./acl-cache.ts";
import { type AclRule, type AclTopic, type AclWho, type Cidr, readAclFile } from "./acl-file.ts";

export const ACL_OWNER = "svc_acl";

/** A source's answer: allow, deny, or undefined (no opinion: ask the next). */
export type AclDecision = AclResult | undefined;

/** Rules carried by an authentication provider (http, jwt, redis, databases...). */
export interface AclSource {
  readonly name: string;
  check(client: ClientInfo, action: AclAction, topic: string): AclDecision | Promise<AclDecision>;
}

export interface AclSettings {
  /** Absolute path of the rule file (`acl_file`). */
  file: string;
  nomatch: AclResult;
  cacheEnabled: boolean;
  cacheMaxSize: number;
  /** ms. */
  cacheTtl: number;
}

export interface AclLogger {
  info(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

// ---- matching ---------------------------------------------------------------------------------

/** A rule of the file ready to match. */
export interface CompiledRule {
  rule: AclRule;
  who(client: ClientInfo): boolean;
  topic(client: ClientInfo, topic: string): boolean;
}

/** A matcher of peer addresses against CIDR blocks (IPv4-mapped IPv6 peers match IPv4 blocks). */
export function cidrMatcher(cidrs: readonly Cidr[]): (host: string) => boolean {
  const list = new BlockList();
  for (const c of cidrs) list.addSubnet(c.address, c.prefix, c.family);
  return (host) => {
    const v = isIP(host);
    return v !== 0 && list.check(host, v === 6 ? "ipv6" : "ipv4");
  };
}

function whoMatcher(w: AclWho): (c: ClientInfo) => boolean {
  switch (w.kind) {
    case "all":
      return () => true;
    case "user": {
      const name = w.name;
      return name === null ? () => true : (c) => c.username === name;
    }
    case "client": {
      const id = w.id;
      return id === null ? () => true : (c) => c.clientId === id;
    }
    case "ipaddr": {
      const inBlock = cidrMatcher(w.cidrs);
      return (c) => inBlock(c.peerHost);
    }
    case "and": {
      const list = w.list.map(whoMatcher);
      return (c) => list.every((f) => f(c));
    }
    case "or": {
      const list = w.list.map(whoMatcher);
      return (c) => list.some((f) => f(c));
    }
  }
}

/**
 * A value put in place of `%u`/`%c`: a user name or client id holding `/`, `+` or `#` would change
 * the filter's levels or add wildcards, so such a value (like an absent user name) cannot match.
 */
function placeholderValue(v: string | undefined): string | undefined {
  return v === undefined || /[/+#]/.test(v) ? undefined : v;
}

/** The filter with `%u` and `%c` levels filled in; undefined when a value is missing. */
export function feedVars(filter: string, client: ClientInfo): string | undefined {
  const levels = filter.split("/");
  for (let i = 0; i < levels.length; i++) {
    if (levels[i] === "%u" || levels[i] === "%c") {
      const v = placeholderValue(levels[i] === "%u" ? client.username : client.clientId);
      if (v === undefined) return undefined;
      levels[i] = v;
    }
  }
  return levels.join("/");
}

function topicMatcher(topics: AclTopic[] | "all"): (c: ClientInfo, topic: string) => boolean {
  if (topics === "all") return () => true;
  const list = topics.map((t): ((c: ClientInfo, topic: string) => boolean) => {
    if (t.kind === "eq") return (_c, topic) => topic === t.topic;
    if (!t.vars) return (_c, topic) => matchTopic(t.filter, topic);
    return (c, topic) => {
      const f = feedVars(t.filter, c);
      return f !== undefined && matchTopic(f, topic);
    };
  });
  return (c, topic) => list.some((f) => f(c, topic));
}

export function compileRules(rules: AclRule[]): CompiledRule[] {
  return rules.map((rule) => ({ rule, who: whoMatcher(rule.who), topic: topicMatcher(rule.topics) }));
}

/**
 * The first rule that applies to (client, action, topic), or undefined. A subscription's filter
 * is matched as a topic name: a rule's wildcards match its levels, and `{eq, "#"}` only `#` itself.
 */
export function firstMatch(
  rules: readonly CompiledRule[],
  client: ClientInfo,
  action: AclAction,
  topic: string,
): CompiledRule | undefined {
  for (const r of rules) {
    const a = r.rule.access;
    if (a !== "pubsub" && a !== action) continue;
    if (r.who(client) && r.topic(client, topic)) return r;
  }
  return undefined;
}

// ---- the engine ---------------------------------------------------------------------------------

const M_ALLOW = metricIndex("client.acl.allow");
const M_DENY = metricIndex("client.acl.deny");
const M_CACHE_HIT = metricIndex("client.acl.cache_hit");

export class Acl {
  readonly caches: AclCaches;
  /** null while no rule file could be read (the $SYS guard's rule applies then). */
  private rules: CompiledRule[] | null = null;
  private sources: AclSource[] = [];
  private started = false;

  /** @param enabled whether a zone's clients are checked (`zone.<zone>.enable_acl`). */
  constructor(
    private readonly broker: Broker,
    private readonly settings: AclSettings,
    private readonly enabled: (zone: string) => boolean,
    private readonly logger: AclLogger,
  ) {
    this.caches = new AclCaches({ maxSize: settings.cacheMaxSize, ttl: settings.cacheTtl });
  }

  /** Number of file rules in force (0 when the file could not be read). */
  get ruleCount(): number {
    return this.rules?.length ?? 0;
  }

  get file(): string {
    return this.settings.file;
  }

  /**
   * Loads the rule file and takes over `client.check_acl`. A file that does not parse stops the
   * start (AclFileError, file:line); a missing file is logged and the $SYS guard's rule stays.
   */
  start(): void {
    try {
      this.rules = compileRules(readAclFile(this.settings.file));
      this.logger.info({ file: this.settings.file, rules: this.rules.length }, "ACL rules loaded");
    } catch (err) {
      if ((err as { cause?: NodeJS.ErrnoException }).cause?.code !== "ENOENT") throw err;
      this.logger.error(
        { file: this.settings.file },
        "ACL file not found: no rules loaded; only local clients may subscribe to $SYS",
      );
    }
    this.broker.hooks.add(
      "client.check_acl",
      (client: ClientInfo, action: AclAction, topic: string, _acc: AclResult) => this.onCheck(client, action, topic),
      PRIORITY.acl,
      ACL_OWNER,
    );
    removeSysGuard(this.broker);
    this.started = true;
  }

  stop(): void {
    if (!this.started) return;
    this.broker.hooks.removeOwner(ACL_OWNER);
    this.started = false;
  }

  /**
   * Reads the rule file again and puts its rules in force, without touching connections; every
   * ACL cache is emptied. On an error (AclFileError naming file:line) the old rules stay.
   */
  reload(): { rules: number } {
    const rules = compileRules(readAclFile(this.settings.file));
    this.rules = rules;
    this.caches.clearAll();
    this.logger.info({ file: this.settings.file, rules: rules.length }, "ACL rules reloaded");
    return { rules: rules.length };
  }

  /** Adds a provider's rules to the chain, after those added before, before the file's. */
  addSource(s: AclSource): void {
    this.sources = [...this.sources.filter((x) => x.name !== s.name), s];
    this.caches.clearAll();
  }

  removeSource(name: string): void {
    this.sources = this.sources.filter((x) => x.name !== name);
    this.caches.clearAll();
  }

  /** The cached decisions of a connection (spec's ACL cache entry shape). */
  cacheEntries(client: ClientInfo): AclCacheEntry[] {
    return this.caches.entries(client);
  }

  private onCheck(client: ClientInfo, action: AclAction, filter: string) {
    if (!this.enabled(client.zone)) return undefined;
    const topic = action === "subscribe" ? (parseSharedFilter(filter)?.filter ?? filter) : filter;
    const m = this.broker.metrics;
    const caching = this.settings.cacheEnabled;
    if (caching) {
      const hit = this.caches.get(client, action, topic);
      if (hit !== undefined) {
        m.inc(M_CACHE_HIT);
        m.inc(hit === "allow" ? M_ALLOW : M_DENY);
        this.complete(client, action, topic, hit, true);
        return stop(hit);
      }
    }
    const done = (r: AclResult) => {
      if (caching) this.caches.put(client, action, topic, r);
      m.inc(r === "allow" ? M_ALLOW : M_DENY);
      this.complete(client, action, topic, r, false);
      return stop(r);
    };
    const r = this.decide(client, action, topic, 0);
    return r instanceof Promise ? r.then(done) : done(r);
  }

  /** Tells `client.check_acl_complete` listeners (the rule engine's event) what was decided. */
  private complete(client: ClientInfo, action: AclAction, topic: string, r: AclResult, isCache: boolean): void {
    const h = this.broker.hooks;
    if (h.has("client.check_acl_complete")) h.run("client.check_acl_complete", client, action, topic, r, isCache);
  }

  /** Sources from index `i`, then the file's rules, then `acl_nomatch`. */
  decide(client: ClientInfo, action: AclAction, topic: string, i = 0): AclResult | Promise<AclResult> {
    const sources = this.sources;
    for (; i < sources.length; i++) {
      const d = sources[i].check(client, action, topic);
      if (d instanceof Promise) {
        const next = i + 1;
        return d.then((v) => (v !== undefined ? v : this.decide(client, action, topic, next)));
      }
      if (d !== undefined) return d;
    }
    return this.fromFile(client, action, topic);
  }

  private fromFile(client: ClientInfo, action: AclAction, topic: string): AclResult {
    if (this.rules !== null) {
      const r = firstMatch(this.rules, client, action, topic);
      if (r !== undefined) return r.rule.permission;
    } else if (sysGuard(client, action, topic, "allow") !== undefined) return "deny";
    return this.settings.nomatch;
  }
}
