// One full garbage collection after a surge has passed. The launcher turns V8's memory reducer off
// (its idle-time collections dropped the request path's compiled code), so an idle server never
// collects the tens of megabytes a flood left dead in its heap (its connections' objects, the
// buffers of streams it reset); one collection once the surge is over gives them back, at the cost
// of a pause of tens of ms per surge. A surge is either many connections that have since closed,
// or memory grown since the last collection while no request has come in for a whole check.
// Needs `--expose-gc` (bin/portico.js passes it); without it this does nothing.

/** A surge of connections is at least this many open at once… */
const SURGE = 1000;
/** …and it has passed once no more than this share of them is left. */
const PASSED = 0.25;
/** Resident memory grown by this much since the last collection, on an idle server, is one too. */
const GROWTH = 16 * 1024 * 1024;
const CHECK_MS = 2_000;

export interface SurgeWatch {
  /** The highest count of open connections since the last call, which starts a new count. */
  readonly takePeak: () => number;
  readonly open: () => number;
  /** Requests served so far: unchanged over a check, the server was idle. */
  readonly requests: () => number;
  readonly rss: () => number;
}

export class SurgeGc {
  private readonly timer: NodeJS.Timeout | undefined;
  private peak = 0;
  private lastRequests = -1;
  /** Resident memory after the last collection (measured a check later, once pages are freed). */
  private floor: number | undefined;

  constructor(
    private readonly watch: SurgeWatch,
    private readonly collect: (() => void) | undefined = globalThis.gc,
  ) {
    if (collect !== undefined) this.timer = setInterval(() => this.check(), CHECK_MS).unref();
  }

  private check(): void {
    const { takePeak, open, requests, rss } = this.watch;
    this.peak = Math.max(this.peak, takePeak());
    const served = requests();
    const idle = served === this.lastRequests;
    this.lastRequests = served;
    const resident = rss();
    this.floor ??= resident;
    const connectionsPassed = this.peak >= SURGE && open() <= this.peak * PASSED;
    if (!connectionsPassed && !(idle && resident - this.floor >= GROWTH)) return;
    this.peak = 0;
    this.floor = undefined;
    this.collect!();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
