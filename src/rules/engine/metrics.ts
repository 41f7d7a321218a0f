// Per-node metrics of one rule ({matched, passed, failed, no_result, speed...}, emqx-facts §2) and
// of one action instance ({success, failed}). Speeds are messages per second: `speed` over the
// last tick, `speed_max` the highest seen, `speed_last5m` a 5-minute moving average.

export class RuleMetrics {
  matched = 0;
  passed = 0;
  failed = 0;
  exception = 0;
  no_result = 0;
  speed = 0;
  speed_max = 0;
  speed_last5m = 0;
  private lastMatched = 0;
  private lastAt = Date.now();

  /** Recomputes the speeds (called about once a second). */
  tick(now: number): void {
    const dt = (now - this.lastAt) / 1000;
    if (dt <= 0) return;
    this.speed = round((this.matched - this.lastMatched) / dt);
    if (this.speed > this.speed_max) this.speed_max = this.speed;
    const alpha = Math.min(1, dt / 300);
    this.speed_last5m = round(this.speed_last5m + alpha * (this.speed - this.speed_last5m));
    this.lastMatched = this.matched;
    this.lastAt = now;
  }

  reset(): void {
    this.matched = this.passed = this.failed = this.exception = this.no_result = 0;
    this.speed = this.speed_max = this.speed_last5m = 0;
    this.lastMatched = 0;
    this.lastAt = Date.now();
  }

  view(node: string): RuleMetricsView {
    return {
      node,
      matched: this.matched,
      passed: this.passed,
      failed: this.failed,
      exception: this.exception,
      no_result: this.no_result,
      speed: this.speed,
      speed_max: this.speed_max,
      speed_last5m: this.speed_last5m,
    };
  }
}

export interface RuleMetricsView {
  node: string;
  matched: number;
  passed: number;
  failed: number;
  exception: number;
  no_result: number;
  speed: number;
  speed_max: number;
  speed_last5m: number;
}

export class ActionMetrics {
  success = 0;
  failed = 0;
  taken = 0;

  reset(): void {
    this.success = this.failed = this.taken = 0;
  }

  view(node: string): { node: string; success: number; failed: number; taken: number } {
    return { node, success: this.success, failed: this.failed, taken: this.taken };
  }
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
