// Reads the svc.conf format: `key = value` lines, `#` comment lines, blank lines, values
// optionally in double quotes (with \" and \\ escapes), and trailing ` # comments`.

import type { Assignment } from "./assignment.ts";

export interface ConfFileResult {
  readonly assignments: Assignment[];
  readonly issues: string[];
}

const KEY = /^[A-Za-z0-9_.$-]+$/;

function unquote(text: string): { value: string } | { error: string } {
  let value = "";
  for (let i = 1; i < text.length; i++) {
    const c = text[i];
    if (c === "\\" && i + 1 < text.length) {
      value += text[++i];
    } else if (c === '"') {
      const rest = text.slice(i + 1);
      return rest === "" || /^\s+#/.test(rest) || /^\s*$/.test(rest)
        ? { value }
        : { error: `unexpected text after the closing quote: ${rest.trim()}` };
    } else {
      value += c;
    }
  }
  return { error: "missing closing quote" };
}

/** Parses the text of a configuration file; `name` is how error messages and sources name it. */
export function parseConfFile(text: string, name: string): ConfFileResult {
  const assignments: Assignment[] = [];
  const issues: string[] = [];
  text.split(/\r?\n/).forEach((line, index) => {
    const where = `${name}:${index + 1}`;
    const trimmed = line.trim();
    if (trimmed === "" || trimmed.startsWith("#")) return;
    const eq = trimmed.indexOf("=");
    const key = eq < 0 ? "" : trimmed.slice(0, eq).trim();
    if (eq < 0 || !KEY.test(key)) {
      issues.push(`${where}: syntax error: expected "key = value", got ${JSON.stringify(trimmed)}`);
      return;
    }
    let raw = trimmed.slice(eq + 1).trim();
    if (raw.startsWith('"')) {
      const r = unquote(raw);
      if ("error" in r) {
        issues.push(`${where}: ${key}: ${r.error}`);
        return;
      }
      raw = r.value;
    } else {
      raw = raw.replace(/\s#.*$/, "").trim();
    }
    assignments.push({ key, raw, source: `${name}:${index + 1}`, origin: where });
  });
  return { assignments, issues };
}
