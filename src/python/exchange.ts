// One HTTP request through a Python bridge process: the head out, the body streamed under the
// bridge's credit, the response written to the client as it comes (credit given back as the
// client takes it, so a slow client holds the application back, not Portico's memory). An exception in the application is a 500 (its traceback in the error log), a process
// that dies mid-request a 502; a client that goes away cancels the work in Python. The proxy's
// time limits apply, also once the client has gone: no head within proxyResponseTimeout is a 504,
// a body that pauses past proxyIdleTimeout is cut, and either way the application is told to stop
// and its process is replaced if it does not (worker.ts).
import type { Ctx } from '../http/ctx.js';
import { connectionListed, isHopByHop } from '../http/hop-by-hop.js';
import { HttpError } from '../http/http-error.js';
import { send, startResponse, type RawHeaders } from '../http/respond.js';
import type { BodyTarget } from '../http/response-tap.js';
import { CREDIT_STEP, WINDOW } from './frames.js';
import type { PythonApplication } from './application.js';
import type { PythonStream } from './stream.js';
import { discardRest } from '../upstream/request-body.js';
import { lateError, ResponseClock } from '../gateway/timeouts.js';

/** The application's header list, without the connection-specific fields it may not set (PEP 3333). */
function responseHeaders(pairs: [string, string][]): RawHeaders {
  let listed: Set<string> | undefined;
  for (const [name, value] of pairs)
    if (name.toLowerCase() === 'connection') listed = connectionListed(value);
  const out: RawHeaders = [];
  for (const [name, value] of pairs)
    if (!isHopByHop(name.toLowerCase(), listed)) out.push(name, value);
  return out;
}

/** What goes to the application for one request. */
export interface PythonRequest {
  /** The WSGI environ or the ASGI scope (heads.ts). */
  readonly head: object;
  /** The request has a body, streamed after the head. */
  readonly hasBody: boolean;
}

export async function exchangeWithPython(
  ctx: Ctx,
  { pool, what, limits }: PythonApplication,
  { head, hasBody }: PythonRequest,
): Promise<void> {
  const worker = await pool.worker();
  if (worker === undefined)
    throw new HttpError(503, 'upstream-unreachable', {
      detail: `${what}: no process of the application is running`,
    });
  // A client that left while the request waited (a worker restarting, an earlier stage) had its
  // 'close' already: nothing would cancel the application's work, whose output waits for credit
  // a closed response never gives, holding the worker for ever.
  if (ctx.clientGone) return;
  const req = ctx.body;
  let stream: PythonStream | undefined;
  let clock: ResponseClock | undefined;
  /** A limit ran out: the application is given up on. */
  let late = false;
  const onClose = () => stream?.cancel();
  const onData = (chunk: Buffer) => {
    stream!.body(chunk);
    clock!.sent();
    if (stream!.outstanding >= WINDOW) req.pause();
  };
  const onEnd = () => stream!.end();
  try {
    await new Promise<void>((resolve, reject) => {
      let status = 0;
      let headers: RawHeaders = [];
      let target: BodyTarget | undefined;
      /** Body pieces that came with the head, before it was written. */
      let early: Buffer[] | undefined;
      let ended = false;
      let written = 0;
      let uncredited = 0;
      const credit = () => {
        stream!.credit(uncredited);
        uncredited = 0;
      };
      let draining = false;
      const drained = () => {
        draining = false;
        target!.off('drain', drained);
        clock!.piece();
        credit();
      };
      const write = (chunk: Buffer) => {
        written += chunk.length;
        uncredited += chunk.length;
        if (!target!.write(chunk)) {
          if (draining) return;
          draining = true;
          target!.on('drain', drained);
        } else if (!draining && uncredited >= CREDIT_STEP) credit();
      };
      const finish = () => {
        ctx.length = written;
        target?.end();
        resolve();
      };
      // The head is written once the frames read with it are dispatched: a response that came
      // whole (the usual small one) goes out in one piece, with its length.
      const writeHead = () => {
        try {
          if (ended) {
            send(ctx, status, headers, early!.length === 1 ? early![0] : Buffer.concat(early!));
            return resolve();
          }
          target = startResponse(ctx, status, headers);
        } catch (error) {
          return reject(
            new HttpError(502, 'upstream-failed', {
              detail: `${what}: the application's response head was refused: ${(error as Error).message}`,
            }),
          );
        }
        const pieces = early!;
        early = undefined;
        // HEAD, 204, 304: the head ends the response; the application stops.
        if (target === undefined) return finish();
        for (const piece of pieces) write(piece);
      };
      /** The application failed (`error`) after its head: cut the response, or answer `error` when nothing went out yet. */
      const cut = (error: HttpError) => {
        if (early !== undefined) {
          early = undefined;
          return reject(error);
        }
        ctx.length = written;
        if (!ctx.clientGone) {
          ctx.res.destroy();
          worker.log(`the response was cut after ${written} body bytes: ${error.detail}`);
        }
        resolve();
      };
      // A client gone holds nothing up: the limits still end an application that does not stop.
      clock = new ResponseClock(
        limits,
        // Before the head: its body still coming, and the application has credited all of it.
        () => hasBody && !ctx.clientGone && !req.readableEnded && !req.isPaused(),
        (which) => {
          late = true;
          ctx.length = written;
          // After the head, the error responder cuts the response and logs this.
          reject(lateError(what, which, limits, written));
        },
      );
      stream = worker.open(head, {
        start(code, pairs) {
          status = code;
          headers = responseHeaders(pairs);
          early = [];
          ctx.upstreamMs = clock!.elapsedMs();
          clock!.head(undefined, () => draining && !ctx.clientGone);
          queueMicrotask(writeHead);
        },
        body(chunk) {
          clock!.piece();
          if (early !== undefined) early.push(chunk);
          else if (target !== undefined) write(chunk);
        },
        end() {
          ended = true;
          if (early === undefined) finish();
        },
        credit(bytes) {
          stream!.outstanding -= bytes;
          if (stream!.outstanding < WINDOW && req.isPaused()) req.resume();
        },
        fail(message) {
          const error = new HttpError(500, 'application-error', { detail: `${what}: ${message}` });
          if (status !== 0) cut(error);
          else reject(error);
        },
        gone(reason) {
          const error = new HttpError(502, 'gateway-exited', { detail: reason });
          if (status !== 0) cut(error);
          else reject(error);
        },
      });
      ctx.res.once('close', onClose);
      if (!hasBody) return;
      req.on('data', onData);
      req.once('end', onEnd);
    });
  } finally {
    clock?.stop();
    ctx.res.off('close', onClose);
    req.off('data', onData).off('end', onEnd);
    if (hasBody) discardRest(req);
    // A HEAD, a 304 or a refused head leaves the application's body unread: it stops.
    if (late && stream) worker.abandon(stream);
    else stream?.cancel();
  }
}
