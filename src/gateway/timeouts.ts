// The proxy's time limits, kept for the gateways too (proxyConnectTimeout, proxyResponseTimeout,
// proxyIdleTimeout): a connection within the first, the response head within the second of the
// request sent, then each piece of the body within the third of the one before. Time the client
// holds things up (an upload it sends slowly, a download it reads slowly) does not count against
// the application, as undici does not count it against a backend.
import type { Readable } from 'node:stream';
import type { ResolvedSettings } from '../config/defaults.js';
import { HttpError } from '../http/http-error.js';

export interface GatewayLimits {
  readonly connectMs: number;
  /** From the request sent to the response head. */
  readonly responseMs: number;
  /** Between two pieces of the response body. */
  readonly idleMs: number;
}

export function gatewayLimits(s: ResolvedSettings): GatewayLimits {
  return {
    connectMs: s.proxyConnectTimeout,
    responseMs: s.proxyResponseTimeout,
    idleMs: s.proxyIdleTimeout,
  };
}

/** Which limit ran out: the head's, or the body's between two pieces. */
export type Late = 'head' | 'body';

/**
 * What a gateway that ran out of time becomes: 504 before the head, which the error responder
 * answers; after it, the same error cuts the response, and its detail is the log line saying so.
 */
export function lateError(
  what: string,
  late: Late,
  limits: GatewayLimits,
  written: number,
): HttpError {
  const detail =
    late === 'head'
      ? `${what}: no response head within ${limits.responseMs} ms of the request (proxyResponseTimeout)`
      : `${what}: nothing more of the response within ${limits.idleMs} ms (proxyIdleTimeout); it was cut after ${written} body bytes`;
  return new HttpError(504, 'upstream-timeout', { detail });
}

/**
 * The running clocks, checked by one timer that runs while there are any, every quarter of the
 * shortest limit among them (between 25 ms and 1 s), as Deadlines does for `timeout`: a timer per
 * exchange cost a FastCGI response more than all of its records, and a limit is kept to within a
 * quarter of itself.
 */
class Sweep {
  private first: ResponseClock | undefined;
  private timer: NodeJS.Timeout | undefined;
  private periodMs = 1000;

  add(clock: ResponseClock, shortestMs: number): void {
    clock.previous = undefined;
    clock.next = this.first;
    if (this.first !== undefined) this.first.previous = clock;
    this.first = clock;
    const period = Math.min(1000, Math.max(25, Math.floor(shortestMs / 4)));
    if (this.timer === undefined || period < this.periodMs) {
      clearInterval(this.timer);
      this.periodMs = period;
      this.timer = setInterval(() => this.sweep(), period).unref();
    }
  }

  remove(clock: ResponseClock): void {
    const { previous, next } = clock;
    if (previous === undefined) this.first = next;
    else previous.next = next;
    if (next !== undefined) next.previous = previous;
    clock.previous = clock.next = undefined;
  }

  private sweep(): void {
    const now = Date.now();
    for (let clock = this.first; clock !== undefined;) {
      const next = clock.next;
      clock.check(now);
      clock = next;
    }
    if (this.first === undefined) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}

const sweep = new Sweep();

/** The head's limit, then the body's, for one exchange: events only note the time. */
export class ResponseClock {
  /** @internal Sweep's list. */
  previous: ResponseClock | undefined;
  /** @internal Sweep's list. */
  next: ResponseClock | undefined;
  private since = Date.now();
  /** Made as the request goes out: the access log's upstream time counts from here. */
  private readonly createdAt = performance.now();
  private late: Late = 'head';
  private running = true;

  /**
   * `held`: whether the client holds the exchange up right now (before the head: its upload is
   * what is awaited; after it, its download). `expire` is called once, when a limit runs out.
   */
  constructor(
    private readonly limits: GatewayLimits,
    private held: () => boolean,
    private readonly expire: (late: Late) => void,
  ) {
    sweep.add(this, Math.min(limits.responseMs, limits.idleMs));
  }

  /** A piece of the request went out: the head's time counts from here. */
  sent(): void {
    if (this.late === 'head') this.since = Date.now();
  }

  /** ms since the request went out (the access log's upstream time, read at the head). */
  elapsedMs(): number {
    return performance.now() - this.createdAt;
  }

  /** A piece of the body came, or the client took what was waiting: the next one is timed from here. */
  piece(): void {
    if (this.late === 'body') this.since = Date.now();
  }

  /**
   * The head is complete. With `body`, the stream the response is read from: its pieces and its
   * resumptions are the body's progress, and it is held while paused (the client's buffer is
   * full). Without it, the caller says so by `piece` and `whileHeld`.
   */
  head(body?: Readable, whileHeld?: () => boolean): void {
    if (!this.running) return;
    // A body not paused after its head was read came whole (the output had ended): nothing more
    // is awaited, and a 'data' listener would set it flowing before its reader is there.
    if (body !== undefined && body.readableFlowing !== false) return this.stop();
    this.late = 'body';
    this.since = Date.now();
    if (body !== undefined) {
      const piece = () => this.piece();
      body.on('data', piece).on('resume', piece);
      this.held = () => body.isPaused();
    } else if (whileHeld !== undefined) this.held = whileHeld;
  }

  stop(): void {
    if (!this.running) return;
    this.running = false;
    sweep.remove(this);
  }

  /** @internal Sweep. */
  check(now: number): void {
    if (this.held()) this.since = now;
    const limit = this.late === 'head' ? this.limits.responseMs : this.limits.idleMs;
    if (now - this.since < limit) return;
    this.stop();
    this.expire(this.late);
  }
}
