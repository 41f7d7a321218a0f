// The ACL rule file (`acl_file`, spec section 5 "Access control"). Two forms, mixable in one file,
// one rule after another, tried top to bottom:
//
// 1. The family's Erlang terms (emqx-facts §5), each ending in a dot, `%` comments:
//      {allow, {user, "dashboard"}, subscribe, ["$SYS/#"]}.
//      {deny, all, subscribe, ["$SYS/#", {eq, "#"}]}.
//      {allow, all}.
//    Who: all | {user, "u" | all} | {client, "id" | all} | {ipaddr, "CIDR"} | {ipaddrs, ["CIDR"...]}
//         | {'and', [Who...]} | {'or', [Who...]}.  Topics: a list of filters, {eq, "t/#"}, "eq t/#".
//
// 2. The spec's line form `Allow|Deny <Identity> Subscribe|Publish|pubsub <Topics>`, one rule per
//    line, keywords in any case, lines starting with `#` or `%` are comments:
//      Allow user dashboard Subscribe $SYS/#
//      Allow ipaddr 127.0.0.1 pubsub $SYS/# #
//      Deny all Subscribe $SYS/# eq #
//      Allow all
//    Identity: all | user <name> | client <id> | ipaddr <CIDR> | ipaddrs <CIDR>,<CIDR>...
//              | and(<Identity>, ...) | or(<Identity>, ...)   (`user all`/`client all`: anyone).
//    Topics: filters separated by blanks or commas; `eq <filter>` matches that filter literally.
//    A name or topic holding blanks, commas, parentheses or quotes is written in double quotes
//    (`\"` and `\\` escape); a quoted "all" or "eq" is the literal word.
//
// In both forms `%u` and `%c` as whole topic levels stand for the user name and client id.
// Every problem is reported with `<file>:<line>`; nothing is half-loaded.

import { readFileSync } from "node:fs";
import { isIP } from "node:net";

export type AclPermission = "allow" | "deny";
export type AclAccess = "publish" | "subscribe" | "pubsub";

export interface Cidr {
  /** As written. */
  text: string;
  family: "ipv4" | "ipv6";
  address: string;
  prefix: number;
}

export type AclWho =
  | { kind: "all" }
  /** `name` null = any client (`{user, all}`). */
  | { kind: "user"; name: string | null }
  | { kind: "client"; id: string | null }
  | { kind: "ipaddr"; cidrs: Cidr[] }
  | { kind: "and" | "or"; list: AclWho[] };

export type AclTopic =
  /** Matches only this exact filter text (`{eq, "t/#"}`). */
  | { kind: "eq"; topic: string }
  /** A topic filter; `vars` when it holds `%u`/`%c` levels. */
  | { kind: "filter"; filter: string; vars: boolean };

export interface AclRule {
  permission: AclPermission;
  who: AclWho;
  access: AclAccess;
  /** "all" for `{allow, all}` / `Allow all`. */
  topics: AclTopic[] | "all";
  /** `<file>:<line>` where the rule starts. */
  source: string;
}

export class AclFileError extends Error {
  override name = "AclFileError";
  readonly issues: readonly string[];

  constructor(issues: readonly string[], options?: ErrorOptions) {
    super(
      issues.length === 1 ? issues[0] : `${issues.length} ACL file errors:\n${issues.map((i) => `  ${i}`).join("\n")}`,
      options,
    );
    this.issues = issues;
  }
}

/** Reads and parses an ACL file; throws AclFileError (file:line) on any problem. */
export function readAclFile(path: string): AclRule[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new AclFileError([`${path}: cannot read the ACL file: ${reason}`], { cause: err });
  }
  return parseAclText(text, path);
}

/** Parses the text of an ACL file named `name` (for messages). */
export function parseAclText(text: string, name: string): AclRule[] {
  const rules: AclRule[] = [];
  const issues: string[] = [];
  let i = 0;
  let line = 1;
  const n = text.length;
  while (i < n) {
    const c = text[i];
    if (c === "\n") {
      line++;
      i++;
    } else if (c === " " || c === "\t" || c === "\r") i++;
    else if (c === "%" || c === "#") {
      while (i < n && text[i] !== "\n") i++;
    } else if (c === "{") {
      const start = line;
      const lexer = new TermLexer(text, i, line);
      try {
        const term = parseTerm(lexer);
        lexer.expectDot();
        const r = termRule(term, `${name}:${start}`);
        if (typeof r === "string") issues.push(`${name}:${term.line}: ${r}`);
        else rules.push(r);
      } catch (err) {
        if (!(err instanceof SyntaxIssue)) throw err;
        issues.push(`${name}:${err.line}: ${err.message}`);
        break; // an Erlang syntax error leaves no safe place to resume
      }
      i = lexer.pos;
      line = lexer.line;
    } else {
      let end = text.indexOf("\n", i);
      if (end < 0) end = n;
      const r = lineRule(text.slice(i, end).replace(/\r$/, ""), `${name}:${line}`);
      if (typeof r === "string") issues.push(`${name}:${line}: ${r}`);
      else rules.push(r);
      i = end;
    }
  }
  if (issues.length > 0) throw new AclFileError(issues);
  return rules;
}

// ---- shared validation --------------------------------------------------------------------------

function permissionOf(word: string): AclPermission | undefined {
  const w = word.toLowerCase();
  return w === "allow" || w === "deny" ? w : undefined;
}

function accessOf(word: string): AclAccess | undefined {
  const w = word.toLowerCase();
  return w === "publish" || w === "subscribe" || w === "pubsub" ? w : undefined;
}

/** `a.b.c.d`, `a.b.c.d/n`, an IPv6 address with or without `/n`; a message when invalid. */
export function parseCidr(text: string): Cidr | string {
  const slash = text.indexOf("/");
  const address = slash < 0 ? text : text.slice(0, slash);
  const v = isIP(address);
  if (v === 0) return `invalid IP address "${text}"`;
  const max = v === 4 ? 32 : 128;
  let prefix = max;
  if (slash >= 0) {
    const p = text.slice(slash + 1);
    if (!/^[0-9]{1,3}$/.test(p) || Number(p) > max) return `invalid prefix length in "${text}" (0..${max})`;
    prefix = Number(p);
  }
  return { text, family: v === 4 ? "ipv4" : "ipv6", address, prefix };
}

function topicOf(filter: string, eq: boolean): AclTopic | string {
  if (filter === "") return "empty topic";
  if (eq) return { kind: "eq", topic: filter };
  return { kind: "filter", filter, vars: filter.split("/").some((l) => l === "%u" || l === "%c") };
}

// ---- Erlang terms ---------------------------------------------------------------------------------

type Term =
  | { type: "tuple"; items: Term[]; line: number }
  | { type: "list"; items: Term[]; line: number }
  | { type: "atom"; v: string; line: number }
  | { type: "str"; v: string; line: number };

class SyntaxIssue extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
  }
}

type Tok =
  | { t: "{" | "}" | "[" | "]" | "," | "."; line: number }
  | { t: "atom" | "str"; v: string; line: number }
  | { t: "eof"; line: number };

const ESCAPES: Readonly<Record<string, string>> = { n: "\n", t: "\t", r: "\r", s: " ", e: "\x1b", "0": "\0" };

class TermLexer {
  private peeked: Tok | undefined;

  constructor(
    private readonly text: string,
    public pos: number,
    public line: number,
  ) {}

  peek(): Tok {
    this.peeked ??= this.read();
    return this.peeked;
  }

  next(): Tok {
    const t = this.peek();
    this.peeked = undefined;
    return t;
  }

  expectDot(): void {
    const t = this.next();
    if (t.t !== ".") throw new SyntaxIssue(`expected "." after the rule, got ${describe(t)}`, t.line);
  }

  private read(): Tok {
    const s = this.text;
    for (;;) {
      if (this.pos >= s.length) return { t: "eof", line: this.line };
      const c = s[this.pos];
      if (c === "\n") {
        this.line++;
        this.pos++;
      } else if (c === " " || c === "\t" || c === "\r") this.pos++;
      else if (c === "%") {
        while (this.pos < s.length && s[this.pos] !== "\n") this.pos++;
      } else break;
    }
    const line = this.line;
    const c = s[this.pos];
    if ("{}[],".includes(c)) {
      this.pos++;
      return { t: c as "{", line };
    }
    if (c === ".") {
      this.pos++;
      const after = s[this.pos];
      if (after !== undefined && !/\s|%/.test(after)) throw new SyntaxIssue(`unexpected "." before "${after}"`, line);
      return { t: ".", line };
    }
    if (c === '"') return { t: "str", v: this.quoted('"'), line };
    if (c === "'") return { t: "atom", v: this.quoted("'"), line };
    if (s.startsWith("<<", this.pos)) {
      this.pos += 2;
      if (s[this.pos] !== '"') throw new SyntaxIssue('expected a string after "<<"', line);
      const v = this.quoted('"');
      if (!s.startsWith(">>", this.pos)) throw new SyntaxIssue('expected ">>" after the binary string', this.line);
      this.pos += 2;
      return { t: "str", v, line };
    }
    const m = /^[a-z][A-Za-z0-9_@]*/.exec(s.slice(this.pos, this.pos + 256));
    if (m !== null) {
      this.pos += m[0].length;
      return { t: "atom", v: m[0], line };
    }
    throw new SyntaxIssue(`unexpected character "${c}"`, line);
  }

  private quoted(q: string): string {
    const s = this.text;
    const startLine = this.line;
    let out = "";
    this.pos++;
    while (this.pos < s.length) {
      const c = s[this.pos++];
      if (c === q) return out;
      if (c === "\n") this.line++;
      if (c === "\\" && this.pos < s.length) {
        const e = s[this.pos++];
        out += ESCAPES[e] ?? e;
      } else out += c;
    }
    throw new SyntaxIssue(`missing closing ${q}`, startLine);
  }
}

function describe(t: Tok): string {
  if (t.t === "eof") return "the end of the file";
  if (t.t === "atom" || t.t === "str") return JSON.stringify(t.v);
  return `"${t.t}"`;
}

function parseTerm(lx: TermLexer): Term {
  const t = lx.next();
  if (t.t === "atom" || t.t === "str") return { type: t.t, v: t.v, line: t.line };
  if (t.t === "{" || t.t === "[") {
    const close = t.t === "{" ? "}" : "]";
    const items: Term[] = [];
    if (lx.peek().t === close) lx.next();
    else {
      for (;;) {
        items.push(parseTerm(lx));
        const sep = lx.next();
        if (sep.t === close) break;
        if (sep.t !== ",") throw new SyntaxIssue(`expected "," or "${close}", got ${describe(sep)}`, sep.line);
      }
    }
    return { type: t.t === "{" ? "tuple" : "list", items, line: t.line };
  }
  throw new SyntaxIssue(`expected a term, got ${describe(t)}`, t.line);
}

function show(t: Term): string {
  switch (t.type) {
    case "atom":
      return t.v;
    case "str":
      return JSON.stringify(t.v);
    case "tuple":
      return `{${t.items.map(show).join(", ")}}`;
    case "list":
      return `[${t.items.map(show).join(", ")}]`;
  }
}

function termRule(t: Term, source: string): AclRule | string {
  if (t.type !== "tuple") return `expected a rule tuple, got ${show(t)}`;
  const [p, ...rest] = t.items;
  const permission = p?.type === "atom" ? permissionOf(p.v) : undefined;
  if (permission === undefined || p.type !== "atom" || p.v !== permission)
    return `a rule starts with allow or deny, got ${p === undefined ? "nothing" : show(p)}`;
  if (rest.length === 1) {
    if (rest[0].type === "atom" && rest[0].v === "all")
      return { permission, who: { kind: "all" }, access: "pubsub", topics: "all", source };
    return `expected {${permission}, all}, got ${show(t)}`;
  }
  if (rest.length !== 3) return `a rule is {allow|deny, Who, Access, Topics} or {allow|deny, all}, got ${show(t)}`;
  const who = termWho(rest[0]);
  if (typeof who === "string") return who;
  const a = rest[1];
  const access = a.type === "atom" ? accessOf(a.v) : undefined;
  if (access === undefined || a.type !== "atom" || a.v !== access)
    return `access must be subscribe, publish or pubsub, got ${show(a)}`;
  const topics = termTopics(rest[2]);
  if (typeof topics === "string") return topics;
  return { permission, who, access, topics, source };
}

function termWho(t: Term): AclWho | string {
  if (t.type === "atom" && t.v === "all") return { kind: "all" };
  if (t.type !== "tuple" || t.items.length !== 2 || t.items[0].type !== "atom")
    return `Who must be all, {user, ...}, {client, ...}, {ipaddr, ...}, {ipaddrs, [...]}, {'and', [...]} or {'or', [...]}, got ${show(t)}`;
  const kind = t.items[0].v;
  const v = t.items[1];
  switch (kind) {
    case "user":
    case "username":
    case "client":
    case "clientid": {
      let id: string | null;
      if (v.type === "atom" && v.v === "all") id = null;
      else if (v.type === "str") id = v.v;
      else return `{${kind}, ...} takes a string or all, got ${show(v)}`;
      return kind.startsWith("user") ? { kind: "user", name: id } : { kind: "client", id };
    }
    case "ipaddr": {
      if (v.type !== "str") return `{ipaddr, ...} takes a string, got ${show(v)}`;
      const c = parseCidr(v.v);
      return typeof c === "string" ? c : { kind: "ipaddr", cidrs: [c] };
    }
    case "ipaddrs": {
      if (v.type !== "list" || v.items.length === 0) return `{ipaddrs, ...} takes a list of strings, got ${show(v)}`;
      const cidrs: Cidr[] = [];
      for (const x of v.items) {
        if (x.type !== "str") return `{ipaddrs, ...} takes a list of strings, got ${show(x)}`;
        const c = parseCidr(x.v);
        if (typeof c === "string") return c;
        cidrs.push(c);
      }
      return { kind: "ipaddr", cidrs };
    }
    case "and":
    case "or": {
      if (v.type !== "list" || v.items.length === 0) return `{'${kind}', ...} takes a list of Who, got ${show(v)}`;
      const list: AclWho[] = [];
      for (const x of v.items) {
        const w = termWho(x);
        if (typeof w === "string") return w;
        list.push(w);
      }
      return { kind, list };
    }
    default:
      return `unknown Who ${show(t)}`;
  }
}

function termTopics(t: Term): AclTopic[] | "all" | string {
  if (t.type === "atom" && t.v === "all") return "all";
  const items = t.type === "list" ? t.items : [t];
  if (items.length === 0) return "the topic list is empty";
  const out: AclTopic[] = [];
  for (const x of items) {
    let topic: AclTopic | string;
    if (x.type === "str") topic = x.v.startsWith("eq ") ? topicOf(x.v.slice(3), true) : topicOf(x.v, false);
    else if (x.type === "tuple" && x.items.length === 2 && x.items[0].type === "atom" && x.items[0].v === "eq") {
      const f = x.items[1];
      topic = f.type === "str" ? topicOf(f.v, true) : `{eq, ...} takes a string, got ${show(f)}`;
    } else topic = `a topic is a string or {eq, "..."}, got ${show(x)}`;
    if (typeof topic === "string") return topic;
    out.push(topic);
  }
  return out;
}

// ---- the line form --------------------------------------------------------------------------------

interface Word {
  text: string;
  quoted: boolean;
}

/** A cursor over one line: words, quoted values and the punctuation of identities. */
class LineCursor {
  pos = 0;

  constructor(private readonly s: string) {}

  private skip(): void {
    while (this.pos < this.s.length && /\s/.test(this.s[this.pos])) this.pos++;
  }

  atEnd(): boolean {
    this.skip();
    return this.pos >= this.s.length;
  }

  /** The next punctuation character, if it is one of `chars`. */
  punct(chars: string): string | undefined {
    this.skip();
    const c = this.s[this.pos];
    if (c !== undefined && chars.includes(c)) {
      this.pos++;
      return c;
    }
    return undefined;
  }

  /** A quoted value or a bare word ending at a blank or one of `stops`. */
  word(stops: string): Word | string | undefined {
    this.skip();
    const s = this.s;
    if (this.pos >= s.length) return undefined;
    if (s[this.pos] === '"') {
      let out = "";
      this.pos++;
      while (this.pos < s.length) {
        const c = s[this.pos++];
        if (c === '"') return { text: out, quoted: true };
        if (c === "\\" && this.pos < s.length) out += s[this.pos++];
        else out += c;
      }
      return "missing closing quote";
    }
    const start = this.pos;
    while (this.pos < s.length && !/\s/.test(s[this.pos]) && !stops.includes(s[this.pos]) && s[this.pos] !== '"')
      this.pos++;
    if (this.pos === start) return undefined;
    return { text: s.slice(start, this.pos), quoted: false };
  }

  rest(): string {
    this.skip();
    return this.s.slice(this.pos);
  }
}

const WHO_STOPS = "(),";

function lineRule(text: string, source: string): AclRule | string {
  const cur = new LineCursor(text);
  const p = cur.word(WHO_STOPS);
  if (typeof p === "string") return p;
  const permission = p === undefined || p.quoted ? undefined : permissionOf(p.text);
  if (permission === undefined) return `a rule starts with Allow or Deny, got "${p?.text ?? ""}"`;
  const who = lineWho(cur);
  if (typeof who === "string") return who;
  if (who.kind === "all" && cur.atEnd()) return { permission, who, access: "pubsub", topics: "all", source };
  const a = cur.word(WHO_STOPS);
  if (typeof a === "string") return a;
  const access = a === undefined || a.quoted ? undefined : accessOf(a.text);
  if (access === undefined)
    return `expected Subscribe, Publish or pubsub after the identity, got ${a === undefined ? "the end of the line" : `"${a.text}"`}`;
  const topics: AclTopic[] = [];
  for (;;) {
    while (cur.punct(",") !== undefined) {}
    const w = cur.word(",");
    if (typeof w === "string") return w;
    if (w === undefined) break;
    let topic: AclTopic | string;
    if (!w.quoted && w.text === "eq") {
      const f = cur.word(",");
      if (typeof f === "string") return f;
      if (f === undefined) return "eq needs a topic after it";
      topic = topicOf(f.text, true);
    } else topic = topicOf(w.text, false);
    if (typeof topic === "string") return topic;
    topics.push(topic);
  }
  if (topics.length === 0) return "expected one or more topics after the access";
  return { permission, who, access, topics, source };
}

function lineWho(cur: LineCursor): AclWho | string {
  const w = cur.word(WHO_STOPS);
  if (typeof w === "string") return w;
  if (w === undefined) return "expected an identity (all, user, client, ipaddr, ipaddrs, and(...), or(...))";
  const kind = w.quoted ? "" : w.text.toLowerCase();
  switch (kind) {
    case "all":
      return { kind: "all" };
    case "user":
    case "username":
    case "client":
    case "clientid": {
      const v = cur.word(WHO_STOPS);
      if (typeof v === "string") return v;
      if (v === undefined) return `${kind} needs a name after it`;
      const id = !v.quoted && v.text === "all" ? null : v.text;
      return kind.startsWith("user") ? { kind: "user", name: id } : { kind: "client", id };
    }
    case "ipaddr":
    case "ipaddrs": {
      const cidrs: Cidr[] = [];
      for (;;) {
        const v = cur.word(WHO_STOPS);
        if (typeof v === "string") return v;
        if (v === undefined) return `${kind} needs an address after it`;
        const c = parseCidr(v.text);
        if (typeof c === "string") return c;
        cidrs.push(c);
        if (kind === "ipaddr") break;
        // More addresses follow a comma, unless what follows the comma is not an address (the
        // next identity of an and(...)/or(...) list).
        const save = cur.pos;
        if (cur.punct(",") === undefined) break;
        const peek = cur.word(WHO_STOPS);
        cur.pos = save;
        if (peek === undefined || typeof peek === "string" || typeof parseCidr(peek.text) === "string") break;
        cur.punct(",");
      }
      return { kind: "ipaddr", cidrs };
    }
    case "and":
    case "or": {
      if (cur.punct("(") === undefined) return `${kind} needs "(" and a list of identities`;
      const list: AclWho[] = [];
      for (;;) {
        const x = lineWho(cur);
        if (typeof x === "string") return x;
        list.push(x);
        const sep = cur.punct(",)");
        if (sep === ")") break;
        if (sep === undefined) return `expected "," or ")" in ${kind}(...), got "${cur.rest().slice(0, 20)}"`;
      }
      return { kind, list };
    }
    default:
      return `unknown identity "${w.text}" (expected all, user, client, ipaddr, ipaddrs, and(...) or or(...))`;
  }
}
