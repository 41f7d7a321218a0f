// The descriptor limit checked at start against the connections the listeners accept, and the
// count of open descriptors (`/nodes` process_used).

import { closeSync, openSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DEFAULT_CAPACITY, descriptorLimitWarning, openFileLimit, openHandles } from "../../src/sys/descriptors.ts";

describe("descriptor limit", () => {
  it("warns when the limit is below the connections the listeners accept, up to the default capacity", () => {
    const w = descriptorLimitWarning(20_000, 1_331_200);
    expect(w).toContain("may open 20000 files");
    expect(w).toContain("up to 1331200 connections");
    expect(w).toContain(`at least ${DEFAULT_CAPACITY + 1024}`);
    // A listener configured for fewer connections asks for fewer descriptors.
    expect(descriptorLimitWarning(256, 300)).toContain("at least 1324");
  });

  it("is silent when the limit covers them, or the default capacity, or is unknown", () => {
    expect(descriptorLimitWarning(1_048_576, 1_331_200)).toBeNull();
    expect(descriptorLimitWarning(500, 300)).toBeNull();
    expect(descriptorLimitWarning(0, 1_331_200)).toBeNull();
  });

  it("reads this process's limit and open descriptors", () => {
    expect(openFileLimit()).toBeGreaterThan(0);
    expect(openHandles()).toBeGreaterThan(2);
  });

  it("counts descriptors as they open and close", () => {
    const before = openHandles();
    const fds = Array.from({ length: 50 }, () => openSync("/dev/null", "r"));
    try {
      // Other descriptors of the test process may open or close meanwhile: a small margin.
      expect(Math.abs(openHandles() - before - 50)).toBeLessThanOrEqual(2);
    } finally {
      for (const fd of fds) closeSync(fd);
    }
    expect(Math.abs(openHandles() - before)).toBeLessThanOrEqual(2);
  });
});
