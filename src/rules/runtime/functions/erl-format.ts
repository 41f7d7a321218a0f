// Erlang io_lib:format, the formatter behind sprintf_s and sprintf (the family formats with it):
// control sequences `~F.P.PadModC` with field width F (negative: left-justified; `*` takes it
// from the arguments), precision P, pad character Pad, modifiers t/l/k (accepted, no effect)
// and controls:
//   ~s text (string, binary, boolean, list of strings or character codes; P truncates)
//   ~w ~p  a term in Erlang syntax (<<"bin">>, [1,2], #{<<"k">> => v}, undefined); ~W ~P also
//          take a depth argument (ignored)
//   ~f ~e ~g  floats (P digits, default 6); ~B ~b integers in base P (default 10), ~# ~+ with
//          the base prefix, ~X ~x with a prefix argument; ~c a character (repeated P times)
//   ~i skips an argument, ~n newline, ~~ a tilde.
// Too few or too many arguments, or an argument of the wrong kind, is a `badarg` error.

import { RuleEvalError } from "../errors.ts";
import { isMap, isNull, numberToText, textOf, toBytes } from "../values.ts";

function bad(why: string): never {
  throw new RuleEvalError(`badarg: sprintf ${why}`);
}

function textArg(v: unknown): string {
  const t = textOf(v);
  if (t !== null) return t;
  if (typeof v === "boolean") return String(v);
  if (isNull(v)) return "undefined";
  if (Array.isArray(v))
    return v.map((x) => (typeof x === "number" && Number.isInteger(x) ? String.fromCodePoint(x) : textArg(x))).join("");
  return bad(`~s of ${typeof v}`);
}

function isPrintable(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 && c !== 0x0a && c !== 0x09 && c !== 0x0d) return false;
    if (c === 0x7f) return false;
  }
  return true;
}

function quoteBin(s: string): string {
  return s.replace(/[\\"\n\t\r]/g, (c) => (c === "\n" ? "\\n" : c === "\t" ? "\\t" : c === "\r" ? "\\r" : `\\${c}`));
}

function writeFloat(n: number): string {
  const s = String(n);
  if (s.includes("e") && !s.includes(".")) return s.replace("e", ".0e");
  return s;
}

/** A value in Erlang term syntax (~w, ~p). */
export function erlWrite(v: unknown): string {
  if (isNull(v)) return "undefined";
  if (typeof v === "boolean") return String(v);
  if (typeof v === "number") return Number.isInteger(v) ? numberToText(v) : writeFloat(v);
  if (typeof v === "string" || v instanceof Uint8Array) {
    const bytes = toBytes(v);
    const s = bytes.toString("utf8");
    if (typeof v === "string" && isPrintable(s)) {
      // biome-ignore lint/suspicious/noControlCharactersInRegex: checking for non-ASCII
      return /^[\x00-\x7f]*$/.test(s) ? `<<"${quoteBin(s)}">>` : `<<"${quoteBin(s)}"/utf8>>`;
    }
    return `<<${Array.from(bytes).join(",")}>>`;
  }
  if (Array.isArray(v)) return `[${v.map(erlWrite).join(",")}]`;
  if (v instanceof Date) return erlWrite(v.toISOString());
  if (isMap(v)) {
    return `#{${Object.keys(v)
      .map((k) => `${erlWrite(k)} => ${erlWrite(v[k])}`)
      .join(",")}}`;
  }
  return String(v);
}

function intArg(v: unknown): number {
  if (typeof v !== "number" || !Number.isInteger(v)) bad("expects an integer");
  return v;
}

function floatArg(v: unknown): number {
  if (typeof v !== "number") bad("expects a float");
  return v;
}

function inBase(n: number, base: number, upper: boolean): string {
  if (base < 2 || base > 36) bad(`base ${base}`);
  const s = (n < 0 ? "-" : "") + BigInt(Math.abs(n)).toString(base);
  return upper ? s.toUpperCase() : s;
}

/** io_lib:format(Format, Args) as text. */
export function erlFormat(fmt: string, args: readonly unknown[]): string {
  let out = "";
  let ai = 0;
  const next = (): unknown => {
    if (ai >= args.length) bad("has too few arguments");
    return args[ai++];
  };
  const n = fmt.length;
  let i = 0;
  const readNum = (): number | null => {
    if (fmt[i] === "*") {
      i++;
      return intArg(next());
    }
    const m = /^-?\d+/.exec(fmt.slice(i));
    if (m === null) return null;
    i += m[0].length;
    return Number(m[0]);
  };
  while (i < n) {
    const ch = fmt[i++];
    if (ch !== "~") {
      out += ch;
      continue;
    }
    let width = readNum();
    let left = false;
    if (width !== null && width < 0) {
      left = true;
      width = -width;
    }
    let prec: number | null = null;
    let pad = " ";
    if (fmt[i] === ".") {
      i++;
      prec = readNum();
      if (fmt[i] === ".") {
        i++;
        if (fmt[i] === "*") {
          i++;
          const p = next();
          pad = typeof p === "number" ? String.fromCodePoint(p) : textArg(p);
        } else {
          if (i >= n) bad("ends inside a control sequence");
          pad = fmt[i++];
        }
      }
    }
    while (fmt[i] === "t" || fmt[i] === "l" || fmt[i] === "k" || fmt[i] === "K") i++;
    if (i >= n) bad("ends inside a control sequence");
    const c = fmt[i++];
    let s: string;
    let truncate = false;
    switch (c) {
      case "~":
        s = "~";
        break;
      case "n":
        s = "\n";
        break;
      case "c":
        s = String.fromCodePoint(intArg(next())).repeat(prec ?? 1);
        break;
      case "s":
        s = textArg(next());
        if (prec !== null) s = Array.from(s).slice(0, prec).join("");
        truncate = true;
        break;
      case "w":
      case "p":
        s = erlWrite(next());
        break;
      case "W":
      case "P":
        s = erlWrite(next());
        next();
        break;
      case "f":
        s = floatArg(next()).toFixed(prec ?? 6);
        break;
      case "e":
        s = floatArg(next()).toExponential(Math.max(0, (prec ?? 6) - 1));
        break;
      case "g": {
        const x = floatArg(next());
        const a = Math.abs(x);
        s = a >= 0.1 && a < 10000 ? x.toPrecision(prec ?? 6) : x.toExponential(Math.max(0, (prec ?? 6) - 1));
        break;
      }
      case "B":
      case "b":
        s = inBase(intArg(next()), prec ?? 10, c === "B");
        break;
      case "#":
      case "+": {
        const v = intArg(next());
        const base = prec ?? 10;
        const digits = inBase(Math.abs(v), base, c === "#");
        s = `${v < 0 ? "-" : ""}${base}#${digits}`;
        break;
      }
      case "X":
      case "x": {
        const v = intArg(next());
        const prefix = textArg(next());
        const digits = inBase(Math.abs(v), prec ?? 10, c === "X");
        s = `${v < 0 ? "-" : ""}${prefix}${digits}`;
        break;
      }
      case "i":
        next();
        s = "";
        break;
      default:
        return bad(`control ~${c}`);
    }
    if (width !== null) {
      const len = Array.from(s).length;
      if (len < width) {
        const fill = pad.repeat(width - len);
        s = left ? s + fill : fill + s;
      } else if (len > width && truncate) {
        s = Array.from(s).slice(0, width).join("");
      }
    }
    out += s;
  }
  if (ai < args.length) bad("has too many arguments");
  return out;
}
