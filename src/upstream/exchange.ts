// One request to one backend, streamed both ways: the client's body as the backend reads it, the
// backend's response to the client as the client reads it (undici pauses the backend
// while the client's buffer is full). The caller may keep a response instead of relaying it (an
// intercepted error page, an authentication server's yes): its body is then drained, bounded, so
// the connection can be reused. Rejects only before a response head reached the client, when
// another backend or an error page can still answer. A backend that fails after the head cuts the
// client's response (no final chunk, or a stream reset on HTTP/2), so a truncated body never looks
// complete.
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { Dispatcher, Pool } from 'undici';
import type { Ctx } from '../http/ctx.js';
import type { Logger } from '../http/logger.js';
import { startResponse, switchProtocols } from '../http/respond.js';
import type { BodyTarget } from '../http/response-tap.js';
import type { Backend } from './backend.js';
import { relayedHeaders } from './response-headers.js';
import { tunnel } from './tunnel.js';
import { loadUndici } from './undici.js';

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

export function exchange(
  ctx: Ctx,
  pool: Pool,
  backend: Backend,
  options: ExchangeOptions,
): Promise<Kept | undefined> {
  return new Promise((resolve, reject: (failure: ExchangeFailure) => void) => {
    let abort: ((reason: Error) => void) | undefined;
    let resumeBackend: (() => void) | undefined;
    let started = false;
    let headSent = false;
    let target: BodyTarget | undefined;
    let written = 0;
    let kept: Kept | undefined;
    let discarded = 0;
    let settled = false;
    const settle = () => {
      settled = true;
      ctx.res.off('close', onClientClose);
    };
    // The client went away (or its time limit reset it): the backend's work is abandoned too.
    const onClientClose = () => {
      if (!settled) abort?.(new Error('the client closed the connection'));
    };
    ctx.res.once('close', onClientClose);
    const resume = () => resumeBackend?.();

    // undici 7's own handler form, with the head as read off the wire: the newer form
    // (onResponseStart…) is wrapped into this one per request, its head parsed into an object and
    // its trailers too, a tenth of the proxy's own time per request (issue 10). Returning false
    // pauses the backend until `resume`.
    const handler: Dispatcher.DispatchHandler = {
      onConnect(abortRequest) {
        abort = abortRequest;
        started = true;
        if (ctx.clientGone) abortRequest(new Error('the client closed the connection'));
      },
      onUpgrade(_status, raw, backendSocket) {
        settle();
        headSent = true;
        const head = raw ?? [];
        const protocol = String(loadUndici().util.parseHeaders(head).upgrade ?? options.upgrade);
        tunnel(switchProtocols(ctx, protocol, relayedHeaders(head)), backendSocket);
        resolve(undefined);
      },
      onHeaders(status, raw, resumeRequest) {
        resumeBackend = resumeRequest;
        if (status < 200) return true;
        if (options.keep(status)) {
          kept = { status, headers: loadUndici().util.parseHeaders(raw) as IncomingHttpHeaders };
          return true;
        }
        headSent = true;
        target = startResponse(ctx, status, relayedHeaders(raw));
        target?.on('drain', resume);
        return true;
      },
      onData(chunk) {
        if (kept) {
          discarded += chunk.length;
          if (discarded > MAX_DISCARDED) abort?.(new Error('a kept response too large to drain'));
          return true;
        }
        if (!target) return true;
        written += chunk.length;
        return target.write(chunk);
      },
      onComplete() {
        settle();
        if (kept) return resolve(kept);
        target?.off('drain', resume);
        target?.end();
        ctx.length = written;
        resolve(undefined);
      },
      onError(error) {
        settle();
        target?.off('drain', resume);
        // Its head is all the caller needs; the rest of its body is not worth a failure.
        if (kept) return resolve(kept);
        if (!headSent) {
          // Nobody is waiting for an error page any more.
          if (ctx.clientGone) return resolve(undefined);
          return reject({ error, started });
        }
        ctx.length = written;
        if (!ctx.clientGone) {
          options.errorLog.log(
            `[upstream-failed] proxy to ${backend.shown}: the response was cut after ${written} body bytes: ${error.message}`,
          );
          ctx.res.destroy();
        }
        resolve(undefined);
      },
    };
    pool.dispatch(
      {
        path: options.path,
        method: options.upgrade ? 'GET' : (options.method ?? ctx.method),
        headers: options.headers,
        body: options.body ?? null,
        ...(options.upgrade ? { upgrade: options.upgrade } : {}),
      },
      handler,
    );
  });
}
