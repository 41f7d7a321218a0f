// The broker process's GC settings (cli/gc-tuning.ts): a process churning short-lived 64 KB
// buffers, as socket reads of 16 KB publishes do, runs full collections every few tens of MB by
// default and none once the settings are applied. Each case runs in a child process of its own:
// V8 flags are process-wide.

import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const TUNING = fileURLToPath(new URL("../../src/cli/gc-tuning.ts", import.meta.url));

/** Allocates 2 GB in 64 KB buffers, at most 64 alive at a time; prints the full collections seen. */
const CHURN = `
const { PerformanceObserver, constants } = await import("node:perf_hooks");
if (process.argv[1] === "tuned") (await import(${JSON.stringify(TUNING)})).applyGcTuning();
let major = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) major++;
}).observe({ entryTypes: ["gc"] });
let alive = [];
for (let i = 0; i < 32768; i++) {
  alive.push(Buffer.allocUnsafeSlow(65536));
  if (alive.length === 64) alive = [];
  if (i % 512 === 0) await new Promise((r) => setImmediate(r));
}
await new Promise((r) => setTimeout(r, 100));
process.stdout.write(String(major));
`;

function fullCollections(mode: "tuned" | "default"): Promise<number> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--experimental-transform-types", "--no-warnings", "--input-type=module", "-e", CHURN, mode],
      { timeout: 30_000 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`${err.message}\n${stderr}`));
        else resolve(Number(stdout));
      },
    );
  });
}

describe("GC tuning of the broker process", () => {
  it("short-lived buffers force no full collection once applied (and several without)", async () => {
    const untuned = await fullCollections("default");
    const tuned = await fullCollections("tuned");
    expect(untuned).toBeGreaterThanOrEqual(8);
    expect(tuned).toBeLessThanOrEqual(1);
  });
});
