// A small parser of the Prometheus text exposition format (0.0.4): `# HELP`/`# TYPE` lines and
// samples `name{label="value",...} value [timestamp]`, label values with \\, \" and \n escapes.
// Throws on anything malformed, so a test that parses the output also validates it.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  types: Map<string, string>;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*/;

export function parsePrometheus(text: string): Exposition {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    const where = `line ${i + 1}: ${line}`;
    if (line.trim() === "") return;
    if (line.startsWith("#")) {
      const m = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) ?(.*)$/.exec(line);
      if (m === null) return; // a comment
      if (m[1] === "TYPE") {
        if (!["counter", "gauge", "histogram", "summary", "untyped"].includes(m[3]))
          throw new Error(`bad type, ${where}`);
        if (types.has(m[2])) throw new Error(`second TYPE, ${where}`);
        types.set(m[2], m[3]);
      }
      return;
    }
    let rest = line;
    const n = NAME.exec(rest);
    if (n === null) throw new Error(`bad metric name, ${where}`);
    rest = rest.slice(n[0].length);
    const labels: Record<string, string> = {};
    if (rest.startsWith("{")) {
      rest = rest.slice(1);
      while (!rest.startsWith("}")) {
        const l = LABEL.exec(rest);
        if (l === null) throw new Error(`bad label name, ${where}`);
        rest = rest.slice(l[0].length);
        if (!rest.startsWith('="')) throw new Error(`expected =", ${where}`);
        rest = rest.slice(2);
        let v = "";
        for (;;) {
          const c = rest[0];
          if (c === undefined) throw new Error(`unterminated label value, ${where}`);
          rest = rest.slice(1);
          if (c === '"') break;
          if (c === "\\") {
            const e = rest[0];
            rest = rest.slice(1);
            if (e === "n") v += "\n";
            else if (e === "\\" || e === '"') v += e;
            else throw new Error(`bad escape, ${where}`);
          } else v += c;
        }
        if (l[0] in labels) throw new Error(`duplicate label, ${where}`);
        labels[l[0]] = v;
        if (rest.startsWith(",")) rest = rest.slice(1);
        else if (!rest.startsWith("}")) throw new Error(`expected , or }, ${where}`);
      }
      rest = rest.slice(1);
    }
    const parts = rest.trim().split(/\s+/);
    if (!rest.startsWith(" ") || parts.length < 1 || parts.length > 2) throw new Error(`bad value, ${where}`);
    const value = parts[0] === "+Inf" ? Infinity : parts[0] === "-Inf" ? -Infinity : Number(parts[0]);
    if (Number.isNaN(value) && parts[0] !== "NaN") throw new Error(`bad number, ${where}`);
    samples.push({ name: n[0], labels, value });
  });
  return { types, samples };
}
