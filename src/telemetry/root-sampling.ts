// Which root spans (a client's PUBLISH without a traceparent: no parent decides) the facade samples
// at a root ratio r strictly between 0 and 1: in runs. A sampled root starts a run: the roots that
// follow are sampled too, up to `maxRun` in all and only while they come within RUN_WINDOW_MS of
// the run's first; then a gap of dropped roots, geometric with mean L(1 - r)/r after a run of L.
// Each root is thus sampled with probability r (a run of L and its gap hold r of the roots on
// average, whatever L was), but a run's spans come together: the code and data of the traced path
// (span making, attributes, encoding) stay in the caches from one to the next, where a lone sampled
// message among a hundred finds them cold and costs several times as much (bench/overhead.js:
// svc-trace1 against svc-trace1-run1). The window keeps a run to what is near-simultaneous: under
// maxRun roots per window (6,400/s with the node's default run of 64) a run is shorter, and at low
// rates every root is drawn alone, as independent draws would. Even inside a run the traced path
// runs colder than when every message is traced, so runs of 64 within 10 ms cost less per sampled
// message than runs of 16 within 1 ms (in process, 20,000 publishes/s to 10 subscribers at 1%: a
// sampled publish 56-68 us against 92-97, mean). maxRun 1: independent draws (one Math.random() per
// sampled root: a geometric count of roots to drop before the next).

/** How long after its first root a run may still take more. */
export const RUN_WINDOW_MS = 10;

export class RootSampling {
  /** Roots still to drop before the next run; -1: not drawn yet. */
  private skip = -1;
  /** Roots the current run may still take. */
  private left = 0;
  /** Length of the current run, or of the last one while its gap is drawn. */
  private len = 1;
  /** When the current run began (ms). */
  private start = 0;
  /** ln(1 - q) for a gap after a run of L (index L): q = r / (L(1 - r) + r), the gap's mean L(1 - r)/r. */
  private readonly logDrop: Float64Array;

  constructor(
    ratio: number,
    private readonly maxRun: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(ratio > 0 && ratio < 1)) throw new RangeError(`root ratio ${ratio}: runs need a ratio between 0 and 1`);
    if (!(Number.isInteger(maxRun) && maxRun >= 1)) throw new RangeError(`sampling run ${maxRun}: at least 1`);
    this.logDrop = new Float64Array(maxRun + 1);
    for (let l = 1; l <= maxRun; l++) this.logDrop[l] = Math.log1p(-ratio / (l * (1 - ratio) + ratio));
  }

  /** Whether the next root span is sampled. */
  next(): boolean {
    if (this.left > 0) {
      if (this.now() - this.start <= RUN_WINDOW_MS) {
        this.left--;
        this.len++;
        return true;
      }
      this.left = 0; // the run is over: this root falls in its gap
    }
    if (this.skip < 0) this.skip = Math.floor(Math.log(1 - Math.random()) / this.logDrop[this.len]);
    if (this.skip > 0) {
      this.skip--;
      return false;
    }
    this.skip = -1;
    this.len = 1;
    this.left = this.maxRun - 1;
    if (this.left > 0) this.start = this.now();
    return true;
  }
}
