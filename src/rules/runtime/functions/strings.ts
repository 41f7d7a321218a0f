// String functions (emqx-facts 1.2). Lengths and positions count user-perceived characters
// (grapheme clusters), as Erlang's string module does.
//   lower upper trim ltrim rtrim reverse strlen; ascii(s) = the first byte's code
//   substr(s, start[, len])            0-based start
//   split(s, sep)                      every occurrence of sep, empty parts dropped
//   split(s, sep, opt)                 opt notrim (keep empty parts) | leading | leading_notrim
//                                      (first occurrence only) | trailing | trailing_notrim (last)
//   tokens(s, chars[, 'nocrlf'])       split on any of the characters (plus CR, LF), no empties
//   concat(a, b); sprintf_s(fmt, list); sprintf(fmt, ...) (Erlang format, erl-format.ts)
//   pad(s, len[, trailing|leading|both[, char]])
//   replace(s, pattern, with[, all|leading|trailing])
//   regex_match(s, re); regex_replace(s, re, with) (global; `&` is the match, `\N` group N)
//   find(s, pattern[, leading|trailing]) the rest of s from the first (last) match, or ''
// Regular expressions are JavaScript's, which cover the PCRE subset rules use in practice
// (no possessive quantifiers, atomic groups or recursion).

import { RuleEvalError } from "../errors.ts";
import { short, toBytes } from "../values.ts";
import { argInt, argList, argOption, argStr } from "./args.ts";
import { erlFormat } from "./erl-format.ts";
import { type FnTable, fn } from "./types.ts";

const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** The grapheme clusters of s (fast path for ASCII without CR LF). */
export function graphemes(s: string): string[] {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ASCII check
  if (/^[\x00-\x7f]*$/.test(s) && !s.includes("\r\n")) return s.split("");
  return Array.from(segmenter.segment(s), (x) => x.segment);
}

function splitAll(s: string, sep: string): string[] {
  return sep === "" ? [s] : s.split(sep);
}

function splitOnce(s: string, sep: string, last: boolean): string[] {
  const i = sep === "" ? -1 : last ? s.lastIndexOf(sep) : s.indexOf(sep);
  return i < 0 ? [s] : [s.slice(0, i), s.slice(i + sep.length)];
}

type SplitOpt = "notrim" | "leading" | "leading_notrim" | "trailing" | "trailing_notrim";

function split(s: string, sep: string, opt: SplitOpt | null): string[] {
  let parts: string[];
  if (opt === null || opt === "notrim") parts = splitAll(s, sep);
  else parts = splitOnce(s, sep, opt.startsWith("trailing"));
  return opt === null || opt === "leading" || opt === "trailing" ? parts.filter((p) => p !== "") : parts;
}

function tokens(s: string, seps: string, nocrlf: boolean): string[] {
  const set = new Set(Array.from(seps));
  if (nocrlf) {
    set.add("\r");
    set.add("\n");
  }
  const out: string[] = [];
  let cur = "";
  for (const ch of s) {
    if (set.has(ch)) {
      if (cur !== "") out.push(cur);
      cur = "";
    } else cur += ch;
  }
  if (cur !== "") out.push(cur);
  return out;
}

function pad(s: string, len: number, dir: "trailing" | "leading" | "both", ch: string): string {
  const have = graphemes(s).length;
  if (have >= len) return s;
  const missing = len - have;
  if (dir === "leading") return ch.repeat(missing) + s;
  if (dir === "trailing") return s + ch.repeat(missing);
  const pre = Math.floor(missing / 2);
  return ch.repeat(pre) + s + ch.repeat(missing - pre);
}

function replace(s: string, p: string, r: string, where: "all" | "leading" | "trailing"): string {
  if (p === "") return s;
  if (where === "all") return s.split(p).join(r);
  const i = where === "leading" ? s.indexOf(p) : s.lastIndexOf(p);
  return i < 0 ? s : s.slice(0, i) + r + s.slice(i + p.length);
}

const regexCache = new Map<string, RegExp>();
const REGEX_CACHE_MAX = 256;

function regex(fname: string, source: string): RegExp {
  let re = regexCache.get(source);
  if (re === undefined) {
    try {
      re = new RegExp(source, "g");
    } catch {
      throw new RuleEvalError(`badarg: ${fname} invalid regular expression ${short(source)}`);
    }
    if (regexCache.size >= REGEX_CACHE_MAX) regexCache.delete(regexCache.keys().next().value!);
    regexCache.set(source, re);
  }
  re.lastIndex = 0;
  return re;
}

/** An Erlang re:replace replacement (`&` = match, `\N`/`\g{N}` = group) as a function. */
function erlReplacement(rep: string): (match: string, ...rest: unknown[]) => string {
  type Part = string | number;
  const parts: Part[] = [];
  let lit = "";
  for (let i = 0; i < rep.length; i++) {
    const c = rep[i];
    if (c === "&") {
      parts.push(lit, 0);
      lit = "";
    } else if (c === "\\" && i + 1 < rep.length) {
      const rest = rep.slice(i + 1);
      const m = /^(\d+)|^g\{(\d+)\}|^g(\d+)/.exec(rest);
      if (m !== null) {
        parts.push(lit, Number(m[1] ?? m[2] ?? m[3]));
        lit = "";
        i += m[0].length;
      } else {
        lit += rest[0];
        i++;
      }
    } else lit += c;
  }
  parts.push(lit);
  return (match, ...rest) => {
    let out = "";
    for (const p of parts) {
      if (typeof p === "string") out += p;
      else if (p === 0) out += match;
      else {
        const g = rest[p - 1];
        out += typeof g === "string" ? g : "";
      }
    }
    return out;
  };
}

function find(s: string, p: string, last: boolean): string {
  const i = last ? s.lastIndexOf(p) : s.indexOf(p);
  return i < 0 ? "" : s.slice(i);
}

const DIRS = ["trailing", "leading", "both"] as const;
const WHERE = ["all", "leading", "trailing"] as const;
const SPLIT_OPTS = ["notrim", "leading", "leading_notrim", "trailing", "trailing_notrim"] as const;

export const stringFunctions: FnTable = {
  lower: fn(1, (a) => argStr("lower", a, 0).toLowerCase()),
  upper: fn(1, (a) => argStr("upper", a, 0).toUpperCase()),
  trim: fn(1, (a) => argStr("trim", a, 0).trim()),
  ltrim: fn(1, (a) => argStr("ltrim", a, 0).trimStart()),
  rtrim: fn(1, (a) => argStr("rtrim", a, 0).trimEnd()),
  reverse: fn(1, (a) =>
    graphemes(argStr("reverse", a, 0))
      .reverse()
      .join(""),
  ),
  strlen: fn(1, (a) => graphemes(argStr("strlen", a, 0)).length),
  ascii: fn(1, (a) => {
    const b = toBytes(argStr("ascii", a, 0));
    if (b.length === 0) throw new RuleEvalError("badarg: ascii('')");
    return b[0];
  }),
  substr: fn([2, 3], (a) => {
    const g = graphemes(argStr("substr", a, 0));
    const start = argInt("substr", a, 1);
    if (start < 0) throw new RuleEvalError(`badarg: substr start ${start}`);
    if (a.length === 2) return g.slice(start).join("");
    const len = argInt("substr", a, 2);
    if (len < 0) throw new RuleEvalError(`badarg: substr length ${len}`);
    return g.slice(start, start + len).join("");
  }),
  split: fn([2, 3], (a) =>
    split(argStr("split", a, 0), argStr("split", a, 1), a.length === 3 ? argOption("split", a, 2, SPLIT_OPTS) : null),
  ),
  tokens: fn([2, 3], (a) => {
    if (a.length === 3) argOption("tokens", a, 2, ["nocrlf"] as const);
    return tokens(argStr("tokens", a, 0), argStr("tokens", a, 1), a.length === 3);
  }),
  concat: fn(2, (a) => argStr("concat", a, 0) + argStr("concat", a, 1)),
  sprintf_s: fn(2, (a) => erlFormat(argStr("sprintf_s", a, 0), argList("sprintf_s", a, 1))),
  sprintf: fn({ min: 1 }, (a) => erlFormat(argStr("sprintf", a, 0), a.slice(1))),
  pad: fn([2, 3, 4], (a) => {
    const s = argStr("pad", a, 0);
    const len = argInt("pad", a, 1);
    const dir = a.length >= 3 ? argOption("pad", a, 2, DIRS) : "trailing";
    const ch = a.length === 4 ? argStr("pad", a, 3) : " ";
    if (ch === "") throw new RuleEvalError("badarg: pad with ''");
    return pad(s, len, dir, ch);
  }),
  replace: fn([3, 4], (a) =>
    replace(
      argStr("replace", a, 0),
      argStr("replace", a, 1),
      argStr("replace", a, 2),
      a.length === 4 ? argOption("replace", a, 3, WHERE) : "all",
    ),
  ),
  regex_match: fn(2, (a) => regex("regex_match", argStr("regex_match", a, 1)).test(argStr("regex_match", a, 0))),
  regex_replace: fn(3, (a) =>
    argStr("regex_replace", a, 0).replace(
      regex("regex_replace", argStr("regex_replace", a, 1)),
      erlReplacement(argStr("regex_replace", a, 2)),
    ),
  ),
  find: fn([2, 3], (a) =>
    find(
      argStr("find", a, 0),
      argStr("find", a, 1),
      a.length === 3 && argOption("find", a, 2, ["leading", "trailing"] as const) === "trailing",
    ),
  ),
};
