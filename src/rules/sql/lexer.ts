// Rule SQL lexer: turns the statement text into tokens with their line and column.
//
// - Keywords are case-insensitive (SELECT FROM WHERE AND OR NOT IN AS CASE WHEN THEN ELSE END
//   FOREACH DO INCASE DIV TRUE FALSE; IF and ELSIF are reserved and accepted nowhere).
// - Bare names `[A-Za-z_][A-Za-z0-9_$@~]*`; "double quotes" make a name too (a column, an alias,
//   a FROM topic or event), never a string; `""` inside stands for one `"`.
// - 'single quotes' make a string; `''` inside stands for one `'`. No backslash escapes.
// - Numbers: `12`, `1.5`, `1.5e3`, `2e10`. A sign is an operator, except inside a range token.
// - `[a..b]` with integer ends (optionally signed) is one RANGE token: a slice after a path, a
//   list literal elsewhere.
// - After a `.` only digits are read, so `a.1.b` is the path a -> "1" -> b.
// - `--` starts a comment that runs to the end of the line.

import { SqlError } from "./errors.ts";

export type TokenKind = "name" | "string" | "number" | "keyword" | "op" | "range" | "eof";

export interface Token {
  readonly kind: TokenKind;
  /** name: the name; string: the value; keyword: upper case; op: the symbol; number: the source. */
  readonly text: string;
  /** number: the value; range: the start. */
  readonly value: number;
  /** range: the end. */
  readonly to: number;
  /** name: written in double quotes. number: true when written as an integer. */
  readonly flag: boolean;
  /** The source text of the token (keywords in their original case). */
  readonly raw: string;
  readonly line: number;
  readonly column: number;
}

export const KEYWORDS: ReadonlySet<string> = new Set([
  "SELECT",
  "FROM",
  "WHERE",
  "AND",
  "OR",
  "NOT",
  "IN",
  "AS",
  "CASE",
  "WHEN",
  "THEN",
  "ELSE",
  "END",
  "FOREACH",
  "DO",
  "INCASE",
  "DIV",
  "TRUE",
  "FALSE",
  "IF",
  "ELSIF",
]);

const TWO_CHAR_OPS = new Set(["=~", "~=", "!=", "<>", "<=", ">="]);
const ONE_CHAR_OPS = new Set(["=", "<", ">", "+", "-", "*", "/", "(", ")", "[", "]", ",", "."]);
const RANGE_RE = /\[[ \t\r\n]*([+-]?\d+)[ \t\r\n]*\.\.[ \t\r\n]*([+-]?\d+)[ \t\r\n]*\]/y;
const NUMBER_RE = /\d+(\.\d+)?([eE][+-]?\d+)?/y;
const DIGITS_RE = /\d+/y;

function isNameStart(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f;
}

function isNameChar(c: number): boolean {
  return isNameStart(c) || (c >= 0x30 && c <= 0x39) || c === 0x24 || c === 0x40 || c === 0x7e;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** Splits a statement into tokens, the last one being "eof". Throws SqlError. */
export function tokenize(sql: string): Token[] {
  const out: Token[] = [];
  const n = sql.length;
  let i = 0;
  let line = 1;
  let lineStart = 0;
  const push = (kind: TokenKind, text: string, at: number, value = 0, to = 0, flag = false) => {
    out.push({ kind, text, value, to, flag, raw: sql.slice(at, i), line, column: at - lineStart + 1 });
  };
  const fail = (reason: string, at: number): never => {
    throw new SqlError(reason, line, at - lineStart + 1);
  };

  while (i < n) {
    const c = sql.charCodeAt(i);
    // whitespace
    if (c === 0x0a) {
      i++;
      line++;
      lineStart = i;
      continue;
    }
    if (c === 0x20 || c === 0x09 || c === 0x0d) {
      i++;
      continue;
    }
    // comment
    if (c === 0x2d && sql.charCodeAt(i + 1) === 0x2d) {
      while (i < n && sql.charCodeAt(i) !== 0x0a) i++;
      continue;
    }
    const start = i;
    // names and keywords
    if (isNameStart(c)) {
      i++;
      while (i < n && isNameChar(sql.charCodeAt(i))) i++;
      const word = sql.slice(start, i);
      const upper = word.toUpperCase();
      if (KEYWORDS.has(upper)) push("keyword", upper, start);
      else push("name", word, start);
      continue;
    }
    // numbers (after a '.', digits only: a path key)
    if (isDigit(c)) {
      const prev = out.length > 0 ? out[out.length - 1] : undefined;
      const re = prev !== undefined && prev.kind === "op" && prev.text === "." ? DIGITS_RE : NUMBER_RE;
      re.lastIndex = i;
      const m = re.exec(sql)!;
      i += m[0].length;
      if (i < n && isNameStart(sql.charCodeAt(i))) fail(`invalid number '${sql.slice(start, i + 1)}'`, start);
      const isInt = m[1] === undefined && m[2] === undefined;
      push("number", m[0], start, Number(m[0]), 0, isInt);
      continue;
    }
    // 'string' or "name"
    if (c === 0x27 || c === 0x22) {
      const quote = sql[i];
      const startLine = line;
      const startCol = i - lineStart + 1;
      let text = "";
      let closed = false;
      i++;
      while (i < n) {
        const ch = sql[i];
        if (ch === quote) {
          if (sql[i + 1] === quote) {
            text += quote;
            i += 2;
            continue;
          }
          i++;
          closed = true;
          break;
        }
        if (ch === "\n") {
          line++;
          lineStart = i + 1;
        }
        text += ch;
        i++;
      }
      if (!closed) {
        throw new SqlError(quote === "'" ? "unterminated string" : "unterminated quoted name", startLine, startCol);
      }
      if (quote === '"' && text === "") throw new SqlError("empty quoted name", startLine, startCol);
      out.push({
        kind: quote === "'" ? "string" : "name",
        text,
        value: 0,
        to: 0,
        flag: quote === '"',
        raw: sql.slice(start, i),
        line: startLine,
        column: startCol,
      });
      continue;
    }
    // range token [a..b]
    if (c === 0x5b) {
      RANGE_RE.lastIndex = i;
      const m = RANGE_RE.exec(sql);
      if (m !== null) {
        i += m[0].length;
        push("range", m[0], start, Number(m[1]), Number(m[2]));
        continue;
      }
    }
    // operators
    const two = sql.slice(i, i + 2);
    if (TWO_CHAR_OPS.has(two)) {
      i += 2;
      push("op", two, start);
      continue;
    }
    const one = sql[i];
    if (ONE_CHAR_OPS.has(one)) {
      i++;
      push("op", one, start);
      continue;
    }
    fail(`unexpected character '${String.fromCodePoint(sql.codePointAt(i)!)}'`, start);
  }
  push("eof", "", i);
  return out;
}

/** How a token is named in error messages. */
export function describeToken(t: Token): string {
  switch (t.kind) {
    case "eof":
      return "end of input";
    case "keyword":
      return t.text;
    case "string":
      return `string '${t.text}'`;
    case "name":
      return t.flag ? `"${t.text}"` : `'${t.text}'`;
    default:
      return `'${t.text}'`;
  }
}
