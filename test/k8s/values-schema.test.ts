// values.schema.json (the schema helm checks values against before rendering) accepts the
// shipped values.yaml and the documented options, and rejects bad values with the path named.

import { describe, expect, it } from "vitest";
import { schemaErrors } from "./values.ts";

describe("values.schema.json", () => {
  it("accepts the defaults", () => {
    expect(schemaErrors({})).toEqual([]);
  });

  const bad: [string, Record<string, unknown>, RegExp][] = [
    ["a string replica count", { replicaCount: "three" }, /\/replicaCount must be integer/],
    ["an unknown discovery", { cluster: { discovery: "dns" } }, /\/cluster\/discovery must be equal to one of/],
    ["a port out of range", { ports: { mqtt: { port: 70000 } } }, /\/ports\/mqtt\/port must be <= 65535/],
    ["a nodePort out of range", { ports: { mqtt: { nodePort: 80 } } }, /\/ports\/mqtt\/nodePort/],
    ["an unknown Service type", { service: { type: "Ingress" } }, /\/service\/type must be equal to one of/],
    ["an unknown top-level key", { replicas: 3 }, /must NOT have additional properties/],
    ["a misspelt nested key", { ports: { mqtt: { enable: false } } }, /\/ports\/mqtt must NOT have additional/],
    [
      "a chart-managed svc.conf key",
      { config: { "node.name": "x@y" } },
      /\/config property name must be valid|must NOT be valid/,
    ],
    ["a malformed svc.conf key", { config: { "Log Level": "debug" } }, /\/config .*pattern|property name/],
    [
      "a multi-line svc.conf value",
      { config: { "log.level": "debug\nnode.cookie = x" } },
      /\/config\/log.level must match/,
    ],
    ["a svc.conf value that is a map", { config: { "log.level": { a: 1 } } }, /\/config\/log.level must be/],
    ["2 etcd members", { etcd: { replicas: 2 } }, /\/etcd\/replicas must be equal to one of/],
    ["external etcd without endpoints", { etcd: { bundled: false } }, /\/etcd\/endpoints must NOT have fewer than 1/],
    ["an etcd endpoint without scheme", { etcd: { bundled: false, endpoints: ["etcd:2379"] } }, /\/etcd\/endpoints\/0/],
    ["etcd TLS without Secret", { etcd: { tls: { enabled: true } } }, /\/etcd\/tls\/secretName/],
    ["cert-manager without issuer", { tls: { certManager: { enabled: true } } }, /issuerRef\/name/],
    ["a drain timeout in words", { node: { drainTimeout: "30 seconds" } }, /\/node\/drainTimeout must match pattern/],
    ["a zero grace period", { terminationGracePeriodSeconds: 0 }, /\/terminationGracePeriodSeconds/],
    ["an unknown anti-affinity", { podAntiAffinity: "maybe" }, /\/podAntiAffinity must be equal to one of/],
    ["an unknown OTLP protocol", { telemetry: { otlpProtocol: "udp" } }, /\/telemetry\/otlpProtocol/],
    ["a plugin name with a blank", { loadedPlugins: ["svc auth"] }, /\/loadedPlugins\/0 must match pattern/],
    ["a non-numeric volume size", { persistence: { size: "lots" } }, /\/persistence\/size must match pattern/],
  ];
  for (const [what, values, message] of bad) {
    it(`rejects ${what}`, () => {
      const errors = schemaErrors(values);
      expect(errors.length).toBeGreaterThan(0);
      expect(errors.join("\n")).toMatch(message);
    });
  }
});
