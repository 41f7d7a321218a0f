// values.yaml is documented key by key: every key has a comment above it, except the fields of a
// value passed to Kubernetes as it is (resources, security contexts, the issuer reference) and the
// enabled/port/nodePort fields of each port, which the comment of `ports` explains once.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isMap, parseDocument, type YAMLMap } from "yaml";
import { CHART } from "./render.ts";

const PASS_THROUGH = [
  /^resources\./,
  /^etcd\.resources\./,
  /^podSecurityContext\./,
  /^containerSecurityContext\./,
  /^tls\.certManager\.issuerRef\./,
  /^ports\.[A-Za-z0-9]+\.(enabled|port|nodePort)$/,
];

function undocumented(map: YAMLMap, prefix: string, out: string[]): string[] {
  map.items.forEach((pair, i) => {
    const key = `${prefix}${String((pair.key as { value: unknown }).value)}`;
    const comment = (pair.key as { commentBefore?: string }).commentBefore ?? (i === 0 ? map.commentBefore : undefined);
    if (!comment && !PASS_THROUGH.some((re) => re.test(key))) out.push(key);
    if (isMap(pair.value)) undocumented(pair.value, `${key}.`, out);
  });
  return out;
}

describe("values.yaml", () => {
  const doc = parseDocument(readFileSync(join(CHART, "values.yaml"), "utf8"));

  it("parses", () => {
    expect(doc.errors).toEqual([]);
    expect(isMap(doc.contents)).toBe(true);
  });

  it("documents every key", () => {
    expect(undocumented(doc.contents as YAMLMap, "", [])).toEqual([]);
  });

  it("explains the fields of the ports in the comment of `ports`", () => {
    const ports = (doc.contents as YAMLMap).items.find((p) => (p.key as { value: unknown }).value === "ports");
    const comment = (ports?.key as { commentBefore?: string } | undefined)?.commentBefore ?? "";
    for (const field of ["enabled", "nodePort"]) expect(comment).toContain(field);
  });
});
