// One full garbage collection after a surge of connections has passed. The launcher turns V8's
// memory reducer off (its idle-time collections dropped the request path's compiled code), so an
// idle server never collects the tens of megabytes a flood of connections left dead in its heap;
// one collection once the surge is over gives them back, at the cost of a pause of tens of ms per
// surge. Needs `--expose-gc` (bin/portico.js passes it); without it this does nothing.

/** A surge is at least this many connections open at once… */
const SURGE = 1000;
/** …and it has passed once no more than this share of them is left. */
const PASSED = 0.25;
const CHECK_MS = 5_000;

export class SurgeGc {
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(
    /** The highest count of open connections since the last call, which starts a new count. */
    private readonly takePeak: () => number,
    private readonly open: () => number,
    private readonly collect: (() => void) | undefined = globalThis.gc,
  ) {
    if (collect !== undefined) this.timer = setInterval(() => this.check(), CHECK_MS).unref();
  }

  private peak = 0;

  private check(): void {
    this.peak = Math.max(this.peak, this.takePeak());
    if (this.peak < SURGE || this.open() > this.peak * PASSED) return;
    this.peak = 0;
    this.collect!();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
