// The broker process's GC settings (gc-tuning.ts), each case in a child process of its own (what
// they set is process-wide): once applied, every 16 MB read from MQTT connections runs a young
// collection; so a process churning short-lived 64 KB read buffers, as 16 KB publishes make them,
// runs a full collection every half GB or so, where it runs one every hundred MB without them.

import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { YOUNG_COLLECTION_BYTES } from "../../src/gc-tuning.ts";

const TUNING = JSON.stringify(fileURLToPath(new URL("../../src/gc-tuning.ts", import.meta.url)));
const PACING = JSON.stringify(fileURLToPath(new URL("../../src/broker/connection/read-pacing.ts", import.meta.url)));

/** Counts the collections of `kind` (a perf_hooks constant's name) seen, printed at the end. */
const OBSERVE = (kind: string) => `
const { PerformanceObserver, constants } = await import("node:perf_hooks");
if (process.argv[1] === "tuned") (await import(${TUNING})).applyGcTuning();
let seen = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) if (e.detail.kind === constants.${kind}) seen++;
}).observe({ entryTypes: ["gc"] });
`;
const PRINT = `
await new Promise((r) => setTimeout(r, 100));
process.stdout.write(String(seen));
`;

/** Reads 2 GB as 64 KB buffers (counted as Connection.onData counts them), at most 64 alive. */
const CHURN = `${OBSERVE("NODE_PERFORMANCE_GC_MAJOR")}
const { bytesRead } = await import(${PACING});
let alive = [];
for (let i = 0; i < 32768; i++) {
  alive.push(Buffer.allocUnsafeSlow(65536));
  bytesRead(65536);
  if (alive.length === 64) alive = [];
  if (i % 512 === 0) await new Promise((r) => setImmediate(r));
}
${PRINT}`;

/** Counts 80 MB read from connections (no allocation of its own). */
const READS = `${OBSERVE("NODE_PERFORMANCE_GC_MINOR")}
const { bytesRead } = await import(${PACING});
for (let i = 0; i < 80; i++) bytesRead(1024 * 1024);
${PRINT}`;

function run(script: string, mode: "tuned" | "default"): Promise<number> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--experimental-transform-types", "--no-warnings", "--input-type=module", "-e", script, mode],
      { timeout: 30_000 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`${err.message}\n${stderr}`));
        else resolve(Number(stdout));
      },
    );
  });
}

describe("GC tuning of the broker process", () => {
  it("short-lived read buffers force few full collections once applied (and many without)", async () => {
    const without = await run(CHURN, "default");
    const tuned = await run(CHURN, "tuned");
    // Seen: 16-21 without, 2-4 tuned (array buffers are swept after a scavenge, concurrently, so
    // the odd one still meets V8's external memory limit).
    expect(without).toBeGreaterThanOrEqual(8);
    expect(tuned).toBeLessThanOrEqual(6);
    expect(tuned * 2).toBeLessThan(without);
  });

  it(`runs a young collection every ${YOUNG_COLLECTION_BYTES / 1024 / 1024} MB read once applied (and none without)`, async () => {
    expect(await run(READS, "default")).toBeLessThanOrEqual(1);
    const tuned = await run(READS, "tuned");
    expect(tuned).toBeGreaterThanOrEqual((80 * 1024 * 1024) / YOUNG_COLLECTION_BYTES);
    expect(tuned).toBeLessThanOrEqual((80 * 1024 * 1024) / YOUNG_COLLECTION_BYTES + 2);
  });
});
