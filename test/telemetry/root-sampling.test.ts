// Root spans sampled in runs (telemetry/root-sampling.ts): each root still sampled with the ratio's
// probability, runs bounded by their length and by RUN_WINDOW_MS, independent draws at low rates.

import { describe, expect, it } from "vitest";
import { RootSampling, RUN_WINDOW_MS } from "../../src/telemetry/root-sampling.ts";

/**
 * `n` draws with a clock that advances `stepMs` per draw: the sampled share, the runs' lengths and
 * the gaps (roots dropped between two sampled ones: 0 inside a run).
 */
function draw(ratio: number, maxRun: number, n: number, stepMs: number) {
  let t = 0;
  const s = new RootSampling(ratio, maxRun, () => t);
  let sampled = 0;
  const runs: number[] = [];
  const gaps: number[] = [];
  let run = 0;
  let gap = 0;
  for (let i = 0; i < n; i++, t += stepMs) {
    if (s.next()) {
      sampled++;
      if (sampled > 1) gaps.push(gap);
      run++;
      gap = 0;
    } else {
      if (run > 0) runs.push(run);
      run = 0;
      gap++;
    }
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  return { share: sampled / n, runs, meanGap: mean(gaps), meanRunGap: mean(gaps.filter((g) => g > 0)) };
}

describe("RootSampling", () => {
  it("runs of at most maxRun roots, at the ratio, when roots come close together", () => {
    // 1%, runs of 16, 2,000,000 roots a microsecond apart: about 1,250 runs.
    const r = draw(0.01, 16, 2_000_000, 0.001);
    expect(r.share).toBeGreaterThan(0.0088);
    expect(r.share).toBeLessThan(0.0112);
    // A gap of 0 (probability 0.06%) joins two runs; every other run is whole.
    expect(r.runs.filter((l) => l === 16).length / r.runs.length).toBeGreaterThan(0.99);
    expect(Math.max(...r.runs) % 16).toBe(0);
    // The gaps after a run of 16: mean 16 * 0.99 / 0.01.
    expect(r.meanRunGap).toBeGreaterThan(1584 * 0.88);
    expect(r.meanRunGap).toBeLessThan(1584 * 1.12);
  });

  it("a run ends RUN_WINDOW_MS after its first root, and the gap after it keeps the ratio", () => {
    // Roots 0.3 windows apart: a run takes the roots at +0, +0.3, +0.6 and +0.9 windows, never a
    // fifth (a gap of 0, probability 1.3% here, joins two runs).
    const r = draw(0.05, 16, 400_000, RUN_WINDOW_MS * 0.3);
    expect(r.runs.every((l) => l % 4 === 0)).toBe(true);
    expect(r.runs.filter((l) => l === 4).length / r.runs.length).toBeGreaterThan(0.95);
    expect(r.share).toBeGreaterThan(0.045);
    expect(r.share).toBeLessThan(0.055);
  });

  it("roots further apart than the window are drawn alone, as independent draws", () => {
    // 1 root every 2 windows at 10%: runs of 1, geometric gaps of mean 9 (as many below 6 as
    // above: P(gap < 6) = 1 - 0.9^6 = 0.47).
    const r = draw(0.1, 16, 200_000, RUN_WINDOW_MS * 2);
    expect(r.runs.filter((l) => l === 1).length / r.runs.length).toBeGreaterThan(0.85);
    expect(r.share).toBeGreaterThan(0.095);
    expect(r.share).toBeLessThan(0.105);
    expect(r.meanGap).toBeGreaterThan(9 * 0.93);
    expect(r.meanGap).toBeLessThan(9 * 1.07);
  });

  it("maxRun 1: independent draws, whatever the rate", () => {
    const r = draw(0.25, 1, 200_000, 0);
    expect(r.share).toBeGreaterThan(0.24);
    expect(r.share).toBeLessThan(0.26);
    // Geometric gaps of mean 3: consecutive sampled roots (runs over 1) with probability 1/4.
    expect(r.meanGap).toBeGreaterThan(2.85);
    expect(r.meanGap).toBeLessThan(3.15);
  });

  it("a high ratio with long runs keeps the ratio", () => {
    const r = draw(0.8, 64, 400_000, 0);
    expect(r.share).toBeGreaterThan(0.78);
    expect(r.share).toBeLessThan(0.82);
  });

  it("refuses ratios with nothing to draw and runs under 1", () => {
    expect(() => new RootSampling(0, 16)).toThrow(RangeError);
    expect(() => new RootSampling(1, 16)).toThrow(RangeError);
    expect(() => new RootSampling(0.5, 0)).toThrow(RangeError);
    expect(() => new RootSampling(0.5, 1.5)).toThrow(RangeError);
  });
});
