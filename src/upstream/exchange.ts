// One request to one backend, streamed both ways: the client's body as the backend reads it, the
// backend's response to the client as the client reads it (undici pauses the backend
// while the client's buffer is full). The caller may keep a response instead of relaying it (an
// intercepted error page, an authentication server's yes): its body is then drained, bounded, so
// the connection can be reused. Rejects only before a response head reached the client, when
// another backend or an error page can still answer. A backend that fails after the head cuts the
// client's response (no final chunk, or a stream reset on HTTP/2), so a truncated body never looks
// complete. Trailer fields after the backend's body go to the client with its end (respond.ts
// endResponse says which clients get them).
import type { IncomingHttpHeaders } from 'node:http';
import type { Duplex, Readable } from 'node:stream';
import type { Ctx } from '../http/ctx.js';
import type { Logger } from '../http/logger.js';
import { endResponse, startResponse, switchProtocols } from '../http/respond.js';
import type { BodyTarget } from '../http/response-tap.js';
import type { Backend } from './backend.js';
import { ClientLeft } from './gate.js';
import type { Upstream } from './pools.js';
import {
  announcesTrailers,
  relayEarlyHints,
  relayedHeaders,
  relayedTrailers,
} from './response-headers.js';
import type { RawFields, UpstreamHandler } from './transport.js';
import { tunnel } from './tunnel.js';
import { loadUndici } from './undici.js';

const LENGTH_MISMATCH = 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH';
// A kept response's body is read to its end up to this much; beyond, the connection is dropped.
const MAX_DISCARDED = 1024 * 1024;

export interface ExchangeOptions {
  /** GET when `upgrade` is set; the client's method otherwise. */
  readonly method?: string;
  readonly path: string;
  readonly headers: string[];
  readonly body: Readable | undefined;
  /** True: the response is kept (its head returned, its body drained) rather than relayed. */
  readonly keep: (status: number) => boolean;
  /** A 103 Early Hints from the backend is passed on to the client (not an auth server's). */
  readonly earlyHints?: boolean;
  readonly errorLog: Logger;
  /**
   * The protocol the client asks to switch to (`websocket`, by an HTTP/1.1 Upgrade or an HTTP/2
   * extended CONNECT): the backend is asked by an HTTP/1.1 GET Upgrade, and its 101 joins the two.
   */
  readonly upgrade?: string | undefined;
}

/** A response the caller kept; undefined when the exchange answered the client itself. */
export interface Kept {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
}

export interface ExchangeFailure {
  readonly error: unknown;
  /** The request had started on a connection: the backend may have seen some of it. */
  readonly started: boolean;
}

/**
 * Waits at the backend's gate when it is full (a refusal rejects with its 503 as the error), then
 * sends the request. A client that leaves while waiting is answered by nobody: undefined.
 */
export function exchange(
  ctx: Ctx,
  upstream: Upstream,
  backend: Backend,
  options: ExchangeOptions,
): Promise<Kept | undefined> {
  // Taken once: an HTTP/2 stream no longer knows its session's socket once the session is gone.
  const client = ctx.req.socket;
  if (upstream.gate.enter(client)) return send(ctx, upstream, client, backend, options);
  return upstream.gate.wait(client, ctx.res).then(
    () => send(ctx, upstream, client, backend, options),
    (error: unknown) => {
      if (error instanceof ClientLeft) return undefined;
      throw { error, started: false } satisfies ExchangeFailure;
    },
  );
}

/** With a slot of the gate taken: the Relay gives it back when the exchange settles. */
function send(
  ctx: Ctx,
  upstream: Upstream,
  client: object,
  backend: Backend,
  options: ExchangeOptions,
): Promise<Kept | undefined> {
  return new Promise((resolve, reject: (failure: ExchangeFailure) => void) => {
    upstream.pool.dispatch(
      {
        path: options.path,
        method: options.upgrade ? 'GET' : (options.method ?? ctx.method),
        headers: options.headers,
        body: options.body ?? null,
        ...(options.upgrade ? { upgrade: options.upgrade } : {}),
      },
      new Relay(ctx, upstream, client, backend, options, resolve, reject),
    );
  });
}

/**
 * undici 7's own handler form (onConnect, onHeaders, onData, onComplete), with the head as read off
 * the wire. undici 7 still calls its handlers in this form: one in the newer form (onRequestStart…)
 * is wrapped into it per request, its head and trailers parsed into objects besides, a cost every
 * proxied request would pay (bench/instructions.sh, h1-proxy). The form is deprecated, not gone,
 * in undici 7, which package.json holds to; the HTTP/2 pool calls the same. One object per
 * exchange, not a closure per callback. Returning false pauses the backend until `resume`.
 */
class Relay implements UpstreamHandler {
  trailersMayFollow = false;
  private abort: ((reason: Error) => void) | undefined;
  private resumeBackend: (() => void) | undefined;
  /** The request had started on a connection: the backend may have seen some of it. */
  private started = false;
  private headSent = false;
  /**
   * A head read but not yet relayed: it waits for its first body piece, its end, or the event
   * loop's next turn, so a body the parser refuses at once (an invalid chunk size in the head's
   * packet) still gets a 502 rather than a head with nothing after it. undici reports that failure
   * when the backend's socket has closed, in the close phase after this turn's immediates.
   */
  private pendingHead: { readonly status: number; readonly raw: RawFields } | undefined;
  private target: BodyTarget | undefined;
  private written = 0;
  private kept: Kept | undefined;
  private discarded = 0;
  private settled = false;
  /** The final status, once its head has come. */
  private status = 0;
  /** Why the backend's head could not be sent to the client. */
  private unsendable: Error | undefined;
  /** As the request goes to the backend: the access log's upstream time counts from here. */
  private readonly sentAt = performance.now();

  constructor(
    private readonly ctx: Ctx,
    private readonly upstream: Upstream,
    /** Whose slot of the gate this exchange holds. */
    private readonly client: object,
    private readonly backend: Backend,
    private readonly options: ExchangeOptions,
    private readonly resolve: (kept: Kept | undefined) => void,
    private readonly reject: (failure: ExchangeFailure) => void,
  ) {
    ctx.res.on('close', this.onClientClose);
  }

  // The client went away (or its time limit reset it): the backend's work is abandoned too.
  private readonly onClientClose = () => {
    if (!this.settled) this.abort?.(new Error('the client closed the connection'));
  };

  private readonly resume = () => this.resumeBackend?.();

  onConnect(abort: (reason?: Error) => void): void {
    this.abort = abort;
    this.started = true;
    if (this.ctx.clientGone) abort(new Error('the client closed the connection'));
  }

  onUpgrade(_status: number, raw: RawFields | null, backendSocket: Duplex): void {
    this.ctx.upstreamMs = performance.now() - this.sentAt;
    this.settle();
    this.headSent = true;
    const head = raw ?? [];
    const protocol = String(
      loadUndici().util.parseHeaders(head as string[]).upgrade ?? this.options.upgrade,
    );
    tunnel(switchProtocols(this.ctx, protocol, relayedHeaders(head)), backendSocket);
    this.resolve(undefined);
  }

  onHeaders(status: number, raw: RawFields, resume: () => void): boolean {
    this.resumeBackend = resume;
    if (status < 200) {
      if (status === 103 && this.options.earlyHints) relayEarlyHints(this.ctx, raw);
      return true;
    }
    this.status = status;
    this.ctx.upstreamMs = performance.now() - this.sentAt;
    if (this.options.keep(status)) {
      const headers = loadUndici().util.parseHeaders(raw as string[]) as IncomingHttpHeaders;
      this.kept = { status, headers };
      return true;
    }
    this.pendingHead = { status, raw };
    setImmediate(this.relayHeadNextTurn);
    return true;
  }

  private readonly relayHeadNextTurn = (): void => {
    if (this.pendingHead) setImmediate(this.relayHead);
  };

  /** `empty`: the backend's response ended with its head (no body, no trailers). */
  private readonly relayHead = (empty?: boolean): void => {
    const head = this.pendingHead;
    if (head === undefined || this.settled || this.ctx.clientGone) return;
    this.pendingHead = undefined;
    const ctx = this.ctx;
    // Only an HTTP/2 stream must know at its head that trailers may come.
    const trailers = 'stream' in ctx.res && (this.trailersMayFollow || announcesTrailers(head.raw));
    try {
      this.target = startResponse(
        ctx,
        head.status,
        relayedHeaders(head.raw),
        trailers || empty === true ? { trailers, empty: empty === true } : undefined,
      );
    } catch (error) {
      // A head the client's protocol cannot carry (HTTP/2 takes statuses 200 to 599 only): the
      // backend failed, a 502, never an exception out of this turn of the event loop.
      this.unsendable = error as Error;
      this.abort?.(this.unsendable);
      return;
    }
    this.headSent = true;
    this.target?.on('drain', this.resume);
  };

  onData(chunk: Buffer): boolean {
    if (this.kept) {
      this.discarded += chunk.length;
      if (this.discarded > MAX_DISCARDED)
        this.abort?.(new Error('a kept response too large to drain'));
      return true;
    }
    if (this.pendingHead) this.relayHead();
    if (!this.target) return true;
    this.written += chunk.length;
    return this.target.write(chunk);
  }

  onComplete(trailers: RawFields | null): void {
    const trailing = trailers !== null && trailers.length > 0;
    if (this.pendingHead) this.relayHead(!trailing);
    if (this.unsendable) return this.onError(this.unsendable);
    this.settle();
    if (this.kept) return this.resolve(this.kept);
    const target = this.target;
    if (target !== undefined) {
      target.off('drain', this.resume);
      endResponse(this.ctx, target, trailing ? relayedTrailers(trailers) : undefined);
    }
    this.ctx.length = this.written;
    this.resolve(undefined);
  }

  onError(error: Error): void {
    // undici counts a 304's Content-Length (the size of the representation it stands for, RFC
    // 9110 §8.6) as body bytes owed, and fails a response that is whole.
    if (this.status === 304 && (error as NodeJS.ErrnoException).code === LENGTH_MISMATCH)
      return this.onComplete(null);
    this.pendingHead = undefined;
    this.settle();
    this.target?.off('drain', this.resume);
    // Its head is all the caller needs; the rest of its body is not worth a failure.
    if (this.kept) return this.resolve(this.kept);
    const ctx = this.ctx;
    if (!this.headSent) {
      // Nobody is waiting for an error page any more.
      if (ctx.clientGone) return this.resolve(undefined);
      return this.reject({ error, started: this.started });
    }
    ctx.length = this.written;
    if (!ctx.clientGone) {
      // The same word as the gateways' idle limit, so log tools match both.
      const code =
        (error as NodeJS.ErrnoException).code === 'UND_ERR_BODY_TIMEOUT'
          ? 'upstream-timeout'
          : 'upstream-failed';
      this.options.errorLog.log(
        `[${code}] proxy to ${this.backend.shown}: the response was cut after ${this.written} body bytes: ${error.message}`,
      );
      ctx.res.destroy();
    }
    this.resolve(undefined);
  }

  private settle(): void {
    if (this.settled) return;
    this.settled = true;
    this.ctx.res.off('close', this.onClientClose);
    this.upstream.gate.leave(this.client);
  }
}
