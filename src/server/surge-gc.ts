// Memory given back after a surge has passed. The launcher turns V8's memory reducer off (its
// idle-time collections dropped the request path's compiled code), so an idle server never
// collects the tens of megabytes a flood left dead in its heap (its connections' objects, the
// buffers of streams it reset). Once the surge is over, one full collection frees them; a second,
// a few seconds later, finds allocation slow, which is when V8 shrinks the young generation the
// surge grew and compacts the old one; then the C allocator's free pages go back too, since closed
// connections freed as much there. A pause of tens of ms each, once per surge. A surge is either
// many connections that have since closed, or memory grown since the last collection while no
// request has come in for a whole check (then, once most connections open at that collection have
// closed, what they held is collected too). Needs `--expose-gc` (bin/portico.js passes it).
import { allocatorTrim } from './allocator-trim.js';

/** A surge of connections is at least this many open at once… */
const SURGE = 1000;
/** …and it has passed once no more than this share of them is left. */
const PASSED = 0.25;
/** Resident memory grown by this much since the last collection, on an idle server, is one too. */
const GROWTH = 16 * 1024 * 1024;
const CHECK_MS = 2_000;
/** Checks from the first collection to the second: past V8's five-second allocation window. */
const SETTLE_CHECKS = 4;

export interface SurgeWatch {
  /** The highest count of open connections since the last call, which starts a new count. */
  readonly takePeak: () => number;
  readonly open: () => number;
  /** Requests served so far: unchanged over a check, the server was idle. */
  readonly requests: () => number;
  readonly rss: () => number;
}

export interface Collector {
  /** A full collection of the JavaScript heap. */
  readonly collect: () => void;
  /** The C allocator's free pages given back to the system. */
  readonly trim: () => void;
}

export class SurgeGc {
  private readonly timer: NodeJS.Timeout | undefined;
  private peak = 0;
  private lastRequests = -1;
  /** Resident memory after the last collection (measured a check later, once pages are freed). */
  private floor: number | undefined;
  /** Checks left until the second collection; 0 when none is due. */
  private settleIn = 0;
  /** Connections open at the last collection: what they still held could not be freed then. */
  private openAtCollection = 0;

  constructor(
    private readonly watch: SurgeWatch,
    private readonly collector: Collector | undefined = runtimeCollector(),
  ) {
    if (collector !== undefined) this.timer = setInterval(() => this.check(), CHECK_MS).unref();
  }

  private check(): void {
    const { takePeak, open, requests, rss } = this.watch;
    if (this.settleIn > 0 && --this.settleIn === 0) this.settle();
    this.peak = Math.max(this.peak, takePeak());
    const served = requests();
    const idle = served === this.lastRequests;
    this.lastRequests = served;
    const resident = rss();
    this.floor ??= resident;
    const openNow = open();
    const connectionsPassed = this.peak >= SURGE && openNow <= this.peak * PASSED;
    // Clients that held streams or downloads through the last collection have since left.
    const holdersLeft = this.openAtCollection > 0 && openNow <= this.openAtCollection * PASSED;
    const grown = resident - this.floor >= GROWTH;
    if (!connectionsPassed && !(idle && (grown || holdersLeft))) return;
    this.peak = 0;
    this.floor = undefined;
    this.openAtCollection = openNow;
    this.collector!.collect();
    this.settleIn = SETTLE_CHECKS;
  }

  private settle(): void {
    this.collector!.collect();
    this.collector!.trim();
    this.floor = undefined;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

function runtimeCollector(): Collector | undefined {
  const gc = globalThis.gc;
  if (gc === undefined) return undefined;
  const trim = allocatorTrim();
  return { collect: () => gc(), trim: () => trim?.() };
}
