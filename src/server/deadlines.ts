// The `timeout` limit for every request in flight, kept by one sweeping timer instead of a timer
// per request (a timer per request showed up in profiles of the static hot path), over a list of
// links this sweep owns (a Set keyed by request cost a hash per request); links are reused, so a
// request allocates none. A request whose response head is not out by its deadline has its
// connection reset (REFERENCE-behaviour.md §13).
import { http2Module } from '../tls/lazy-modules.js';
import type { Ctx, DeadlineWatch } from '../http/ctx.js';

// Links kept for reuse beyond this many would only hold memory a past surge needed.
const SPARE_LINKS = 1024;

/** One watched request in the sweep's list. */
class Link implements DeadlineWatch {
  ctx: Ctx | undefined = undefined;
  /** When the `timeout` limit resets the connection (ms since the epoch). */
  at = 0;
  previous: Link | undefined = undefined;
  next: Link | undefined = undefined;

  constructor(private readonly owner: Deadlines) {}

  end(): void {
    this.owner.unlink(this);
  }
}

export class Deadlines {
  private first: Link | undefined;
  /** Links no request uses, chained through `next`. */
  private spare: Link | undefined;
  private spares = 0;
  private timer: NodeJS.Timeout | undefined;
  private intervalMs = 1000;

  /** Watches a request; resolution is a quarter of the limit, between 25 ms and 1 s. */
  add(ctx: Ctx, timeoutMs: number): void {
    let link = this.spare;
    if (link === undefined) link = new Link(this);
    else {
      this.spare = link.next;
      this.spares--;
    }
    link.ctx = ctx;
    link.at = ctx.startedAt + timeoutMs;
    link.previous = undefined;
    link.next = this.first;
    if (this.first !== undefined) this.first.previous = link;
    this.first = link;
    ctx.deadline = link;
    const interval = Math.min(1000, Math.max(25, Math.floor(timeoutMs / 4)));
    if (this.timer === undefined || interval < this.intervalMs) {
      clearInterval(this.timer);
      this.intervalMs = interval;
      this.timer = setInterval(() => this.sweep(), interval).unref();
    }
  }

  /** The request no longer needs watching: its head is out, it is gone, or its time is up. */
  unlink(link: Link): void {
    const ctx = link.ctx;
    if (ctx === undefined) return;
    ctx.deadline = undefined;
    const { previous, next } = link;
    if (previous === undefined) this.first = next;
    else previous.next = next;
    if (next !== undefined) next.previous = previous;
    link.ctx = link.previous = link.next = undefined;
    if (this.spares < SPARE_LINKS) {
      link.next = this.spare;
      this.spare = link;
      this.spares++;
    }
  }

  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    while (this.first !== undefined) this.unlink(this.first);
  }

  private sweep(): void {
    const now = Date.now();
    for (let link = this.first; link !== undefined;) {
      const next = link.next;
      const ctx = link.ctx!;
      // Abandoned requests leave here rather than through a listener per request.
      if (ctx.res.headersSent || ctx.clientGone) this.unlink(link);
      else if (link.at <= now) {
        this.unlink(link);
        // HTTP/2: reset this stream only, not the connection the other streams share.
        if ('stream' in ctx.res) ctx.res.stream.close(http2Module().constants.NGHTTP2_CANCEL);
        else ctx.req.socket.destroy();
      }
      link = next;
    }
    if (this.first === undefined) this.close();
  }
}
