// The `timeout` limit for every request in flight, kept by one sweeping timer instead of a timer
// per request (a timer per request showed up in profiles of the static hot path), over a list
// threaded through the requests themselves (a Set keyed by request cost a hash per request). A
// request whose response head is not out by its deadline has its connection reset
// (REFERENCE-behaviour.md §13).
import { http2Module } from '../tls/lazy-modules.js';
import type { Ctx } from '../http/ctx.js';

export class Deadlines {
  private first: Ctx | undefined;
  private timer: NodeJS.Timeout | undefined;
  private intervalMs = 1000;

  /** Watches a request; resolution is a quarter of the limit, between 25 ms and 1 s. */
  add(ctx: Ctx, timeoutMs: number): void {
    ctx.deadline = ctx.startedAt + timeoutMs;
    ctx.deadlines = this;
    ctx.deadlinePrevious = undefined;
    ctx.deadlineNext = this.first;
    if (this.first !== undefined) this.first.deadlinePrevious = ctx;
    this.first = ctx;
    const interval = Math.min(1000, Math.max(25, Math.floor(timeoutMs / 4)));
    if (this.timer === undefined || interval < this.intervalMs) {
      clearInterval(this.timer);
      this.intervalMs = interval;
      this.timer = setInterval(() => this.sweep(), interval).unref();
    }
  }

  /** The response head is out (respond.ts): the limit no longer applies. */
  remove(ctx: Ctx): void {
    if (ctx.deadlines !== this) return;
    ctx.deadlines = undefined;
    const { deadlinePrevious: previous, deadlineNext: next } = ctx;
    if (previous === undefined) this.first = next;
    else previous.deadlineNext = next;
    if (next !== undefined) next.deadlinePrevious = previous;
    ctx.deadlinePrevious = ctx.deadlineNext = undefined;
  }

  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    while (this.first !== undefined) this.remove(this.first);
  }

  private sweep(): void {
    const now = Date.now();
    for (let ctx = this.first; ctx !== undefined;) {
      const next = ctx.deadlineNext;
      // Abandoned requests leave here rather than through a listener per request.
      if (ctx.res.headersSent || ctx.clientGone) this.remove(ctx);
      else if (ctx.deadline <= now) {
        this.remove(ctx);
        // HTTP/2: reset this stream only, not the connection the other streams share.
        if ('stream' in ctx.res) ctx.res.stream.close(http2Module().constants.NGHTTP2_CANCEL);
        else ctx.req.socket.destroy();
      }
      ctx = next;
    }
    if (this.first === undefined) this.close();
  }
}
