// One HTTP request through a Python bridge process: the head out, the body streamed under the
// bridge's credit, the response streamed back at the client's pace (credit given as the client
// takes it). An exception in the application is a 500 (its traceback in the error log), a process
// that dies mid-request a 502; a client that goes away cancels the work in Python.
import { Readable } from 'node:stream';
import type { Ctx } from '../http/ctx.js';
import { connectionListed, isHopByHop } from '../http/hop-by-hop.js';
import { HttpError } from '../http/http-error.js';
import { sendStream, type RawHeaders } from '../http/respond.js';
import { CREDIT_STEP, WINDOW } from '../process/python-frames.js';
import type { PythonPool } from '../process/python-pool.js';
import type { PythonStream } from '../process/python-worker.js';

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

export async function exchangeWithPython(
  ctx: Ctx,
  pool: PythonPool,
  head: object,
  hasBody: boolean,
  what: string,
): Promise<void> {
  const worker = await pool.worker();
  if (worker === undefined)
    throw new HttpError(503, 'upstream-unreachable', {
      detail: `${what}: no process of the application is running`,
    });
  let pushed = 0;
  let credited = 0;
  let stream: PythonStream | undefined;
  const body = new Readable({
    highWaterMark: CREDIT_STEP,
    read() {
      // What left this buffer is credit for the bridge to send more.
      const consumed = pushed - body.readableLength - credited;
      if (consumed >= CREDIT_STEP || (consumed > 0 && body.readableLength === 0)) {
        credited += consumed;
        stream?.credit(consumed);
      }
    },
  });
  const req = ctx.req;
  const onClose = () => stream?.cancel();
  const onData = (chunk: Buffer) => {
    stream!.body(chunk);
    if (stream!.outstanding >= WINDOW) req.pause();
  };
  const onEnd = () => stream!.end();
  try {
    await new Promise<void>((resolve, reject) => {
      let started = false;
      const cut = (reason: string) => body.destroy(new Error(reason));
      stream = worker.open(head, {
        start(status, pairs) {
          started = true;
          sendStream(ctx, status, responseHeaders(pairs), body).then(resolve, (error: unknown) => {
            body.destroy();
            const out = 'stream' in ctx.res ? ctx.res.stream : ctx.res;
            if (out.destroyed) resolve();
            else if (ctx.responded) reject(error);
            else
              reject(
                new HttpError(502, 'upstream-failed', {
                  detail: `${what}: the application's response head was refused: ${(error as Error).message}`,
                }),
              );
          });
        },
        body(chunk) {
          pushed += chunk.length;
          body.push(chunk);
        },
        end: () => body.push(null),
        credit(bytes) {
          stream!.outstanding -= bytes;
          if (stream!.outstanding < WINDOW && req.isPaused()) req.resume();
        },
        fail(message) {
          if (started) return cut(message);
          reject(new HttpError(500, 'application-error', { detail: `${what}: ${message}` }));
        },
        gone(reason) {
          if (started) return cut(reason);
          reject(new HttpError(502, 'gateway-exited', { detail: reason }));
        },
      });
      ctx.res.once('close', onClose);
      if (!hasBody) return;
      req.on('data', onData);
      req.once('end', onEnd);
    });
  } finally {
    ctx.res.off('close', onClose);
    req.off('data', onData).off('end', onEnd);
    // A HEAD, a 304 or a refused head leaves the application's body unread: it stops.
    stream?.cancel();
  }
}
