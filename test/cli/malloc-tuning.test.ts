// `svc start` re-executes itself once with glibc's malloc thresholds raised (src/malloc-tuning.ts):
// the rule on the environment, and a real node started from the sources: the same process (PID),
// its environment as the kernel holds it (/proc/<pid>/environ), and the way to leave it alone.

import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { MALLOC_TUNABLES, tunedEnv } from "../../src/malloc-tuning.ts";
import { type ChildNode, startChildNode } from "../helpers/child-node.ts";

describe("tunedEnv", () => {
  it("adds the thresholds to an environment without GLIBC_TUNABLES", () => {
    expect(tunedEnv({})).toBe(MALLOC_TUNABLES);
    expect(MALLOC_TUNABLES).toContain("glibc.malloc.trim_threshold=33554432");
  });

  it("keeps the user's other tunables, ours after them", () => {
    expect(tunedEnv({ GLIBC_TUNABLES: "glibc.malloc.arena_max=2" })).toBe(
      `glibc.malloc.arena_max=2:${MALLOC_TUNABLES}`,
    );
  });

  it("changes nothing when the user set a threshold, or once done, or when turned off", () => {
    expect(tunedEnv({ GLIBC_TUNABLES: "glibc.malloc.trim_threshold=131072" })).toBeNull();
    expect(tunedEnv({ GLIBC_TUNABLES: "glibc.malloc.arena_max=2:glibc.malloc.mmap_threshold=65536" })).toBeNull();
    expect(tunedEnv({ SVC_MALLOC_TUNING: "on" })).toBeNull();
    expect(tunedEnv({ SVC_MALLOC_TUNING: "off" })).toBeNull();
  });
});

/** The environment of a running process, as the kernel holds it. */
function environOf(pid: number): Map<string, string> {
  const out = new Map<string, string>();
  for (const kv of readFileSync(`/proc/${pid}/environ`, "utf8").split("\0")) {
    const eq = kv.indexOf("=");
    if (eq > 0) out.set(kv.slice(0, eq), kv.slice(eq + 1));
  }
  return out;
}

describe.skipIf(process.platform !== "linux")("svc start", () => {
  let node: ChildNode | undefined;
  afterEach(async () => {
    await node?.kill();
    node?.cleanup();
    node = undefined;
  });

  it("runs in the process it was started as, with the thresholds in its environment", async () => {
    node = await startChildNode({});
    const pid = node.proc.pid ?? 0;
    const env = environOf(pid);
    expect(env.get("SVC_MALLOC_TUNING")).toBe("on");
    // glibc cuts the variable it read after the first tunable's value; both were applied.
    expect(env.get("GLIBC_TUNABLES")).toMatch(/^glibc\.malloc\.trim_threshold=33554432/);
    expect(readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")).toContain("start");
  });

  it("leaves the allocator alone with SVC_MALLOC_TUNING=off", async () => {
    node = await startChildNode({}, { env: { SVC_MALLOC_TUNING: "off" } });
    const env = environOf(node.proc.pid ?? 0);
    expect(env.get("SVC_MALLOC_TUNING")).toBe("off");
    expect(env.has("GLIBC_TUNABLES")).toBe(false);
  });
});
