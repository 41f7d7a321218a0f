// Layer rules of docs/architecture.md, checked in CI (`npm run depcheck`) on the compiled output
// in dist/ (the TypeScript 7 compiler has no parser API for the checker to read .ts files; the
// compiled files keep every runtime import, one to one, with the same paths).
// Dependencies point down: mqtt, hooks, config, telemetry -> listeners -> broker -> features
// (retainer, auth, rules, sys...) -> services -> api / cli / dashboard; main.ts wires them.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "Runtime import cycles make start order fragile (type-only cycles are allowed).",
      from: {},
      to: { circular: true, dependencyTypesNot: ["type-only"] },
    },
    {
      name: "mqtt-is-pure",
      severity: "error",
      comment: "src/mqtt is pure protocol code: it imports nothing internal.",
      from: { path: "^dist/mqtt/" },
      to: { path: "^dist/", pathNot: "^dist/mqtt/" },
    },
    {
      name: "base-layers-stay-low",
      severity: "error",
      comment: "hooks, config and telemetry sit below everything else.",
      from: { path: "^dist/(hooks|config|telemetry)/" },
      to: { path: "^dist/", pathNot: "^dist/($1|mqtt)/" },
    },
    {
      name: "listeners-know-no-broker",
      severity: "error",
      comment: "Listeners hand streams to a handler; they do not know the core.",
      from: { path: "^dist/listeners/" },
      to: { path: "^dist/", pathNot: "^dist/(listeners|mqtt|telemetry)/" },
    },
    {
      name: "broker-knows-no-features",
      severity: "error",
      comment: "The core knows features only through hooks and the ports it owns.",
      from: { path: "^dist/broker/" },
      to: {
        path: "^dist/(cluster|rules|api|cli|dashboard|services|plugins|retainer|auth|sys|k8s|bridges|delayed)/|^dist/(main|node)\\.js$",
      },
    },
    {
      name: "adapters-use-services",
      severity: "error",
      comment: "API, CLI and dashboard call the service layer, never broker internals.",
      from: { path: "^dist/(api|cli|dashboard)/" },
      to: { path: "^dist/broker/", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "only-etcd-store-imports-etcd3",
      severity: "error",
      from: { pathNot: "^dist/cluster/etcd-store\\.js$" },
      to: { path: "node_modules/etcd3/" },
    },
    {
      name: "only-k8s-imports-client-node",
      severity: "error",
      from: { pathNot: "^dist/k8s/" },
      to: { path: "node_modules/@kubernetes/client-node/" },
    },
    {
      name: "otel-sdk-only-in-main",
      severity: "error",
      from: { pathNot: "^dist/(main|tracing-sdk|metrics-sdk)\\.js$" },
      to: { path: "node_modules/@opentelemetry/sdk-" },
    },
    {
      name: "no-unresolvable",
      severity: "error",
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: false,
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default"] },
  },
};
