// The one place responses leave: every head is finished here (response-head.ts: customHeaders,
// `Server`, an errorConfig page's error status, no content fields without content), the status
// and length are recorded for the access log, HEAD responses and statuses without content (204,
// 205, 304) go without a body, and an HTTP/2 response is answered on its stream (http2-head.ts).
import type { ServerResponse } from 'node:http';
import type { Duplex, Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { pump } from './body-pump.js';
import type { Ctx } from './ctx.js';
import { FinishedHead } from './finished-head.js';
import { listsTrailers } from './hop-by-hop.js';
import type { Http2Response } from './http2-exchange.js';
import { headerObject, trailerObject } from './http2-head.js';
import { writeStoredHead } from './node-internals.js';
import type { CustomHeader } from './resolved.js';
import {
  addCustomAndServer,
  finalize,
  indexOfHeader,
  NO_CONTENT,
  sending,
} from './response-head.js';
import { TappedTarget, tapTransform, tapWritable, type BodyTarget } from './response-tap.js';

/** Response headers as a flat [name, value, name, value…] list, the form Node writes fastest. */
export type RawHeaders = string[];

/** A status whose response has no content, whatever was meant to go in it (204, 205, 304). */
export function hasNoContent(status: number): boolean {
  return NO_CONTENT.has(status);
}

/** Writes the head: on the HTTP/2 stream itself (core API), or with one writeHead over HTTP/1. */
function writeHead(ctx: Ctx, status: number, headers: RawHeaders, endStream: boolean): void {
  if ('stream' in ctx.res) ctx.res.stream.respond(headerObject(headers, status), { endStream });
  else ctx.res.writeHead(status, headers);
}

/** A complete response from memory; `text`: the body's joinedText, when it was made already. */
export function send(
  ctx: Ctx,
  status: number,
  headers: RawHeaders,
  body?: Buffer | string,
  text?: string,
): void {
  const tap = ctx.tap?.head(status, headers);
  if (tap) {
    if (body !== undefined) tap.data(typeof body === 'string' ? Buffer.from(body) : body);
    tap.end();
    if (tap.absorb) return;
  }
  deliver(ctx, finalize(ctx, status, headers), headers, undefined, body, text);
}

// Node writes a head and a Buffer body to the socket through its generic writev, which reads each
// piece and its encoding back through V8's API; a string body it joins to the head and writes at
// once, a cheaper path for a small body than copying it into a string costs. As latin1 every byte
// goes out as it is.
export const JOINED_BODY_MAX = 16 * 1024;

/**
 * A small body as the text its HTTP/1.1 response is written with, for a body sent many times (a
 * cached file): made once rather than for every response. Undefined for a larger body.
 */
export function joinedText(body: Buffer): string | undefined {
  return body.length <= JOINED_BODY_MAX ? body.toString('latin1') : undefined;
}

/**
 * A finalized head and its body from memory; `kept` holds the head's forms built once, `text` the
 * body's joinedText when it was made already.
 */
function deliver(
  ctx: Ctx,
  status: number,
  headers: readonly string[],
  kept: FinishedHead | undefined,
  body: Buffer | string | undefined,
  text?: string,
): void {
  const bodiless = body === undefined || ctx.method === 'HEAD' || NO_CONTENT.has(status);
  // The body bytes sent, as nginx's $body_bytes_sent: none for HEAD, 204, 304.
  ctx.length = bodiless ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  if ('stream' in ctx.res) {
    const object = kept === undefined ? headerObject(headers, status) : kept.headerObject;
    ctx.res.stream.respond(object, { endStream: bodiless });
    if (!bodiless) ctx.res.stream.end(body);
    return;
  }
  const store = kept?.fieldStore;
  if (store === undefined) ctx.res.writeHead(status, headers as string[]);
  else writeStoredHead(ctx.res, status, store);
  if (bodiless) ctx.res.end();
  else if (typeof body !== 'string' && body.length <= JOINED_BODY_MAX)
    ctx.res.end(text ?? body.toString('latin1'), 'latin1');
  else ctx.res.end(body);
}

// What a head is finished for when a request has no location's settings.
const NO_CUSTOM: readonly CustomHeader[] = Object.freeze([]);

/**
 * A head that changes only with what it describes (a file held in the static cache, an error
 * page): the location's customHeaders and `Server` are added once per location, not per response,
 * and its HTTP/2 and HTTP/1.1 forms are built once too (finished-head.ts). The last location's is
 * at hand; others', once there are several, are kept by their customHeaders (a Plan makes one
 * list per distinct set: compile.ts).
 */
export class KeptHead {
  private lastCustom: readonly CustomHeader[] | undefined;
  /** null: not keepable for `lastCustom` (a `{path}` value differs per request). */
  private last: FinishedHead | null = null;
  private others: WeakMap<readonly CustomHeader[], FinishedHead | null> | undefined;

  constructor(
    readonly headers: readonly string[],
    readonly status = 200,
  ) {
    // Such a response loses its content fields in finalize(); a kept head would keep them.
    if (NO_CONTENT.has(status))
      throw new Error(`a kept head needs a status with content, not ${status}`);
  }

  finishedFor(custom: readonly CustomHeader[]): FinishedHead | null {
    if (custom === this.lastCustom) return this.last;
    if (this.lastCustom !== undefined)
      (this.others ??= new WeakMap()).set(this.lastCustom, this.last);
    let finished = this.others?.get(custom);
    if (finished === undefined) {
      if (custom.some((h) => h.hasPath)) finished = null;
      else {
        const list = this.headers.slice();
        addCustomAndServer(list, custom, '');
        finished = new FinishedHead(list, this.status);
      }
    }
    this.lastCustom = custom;
    this.last = finished;
    return finished;
  }
}

/**
 * `send(ctx, head.status, head.headers, body)`, with the head finalized once for every response
 * that carries it as it is: no cache watching, no errorConfig rendering, no `{path}` in
 * customHeaders.
 */
export function sendKept(ctx: Ctx, head: KeptHead, body: Buffer, text?: string): void {
  const finished =
    ctx.tap === undefined && ctx.errorStatus === undefined && ctx.errorHeaders.length === 0
      ? head.finishedFor(ctx.resolved?.customHeaders ?? NO_CUSTOM)
      : null;
  if (finished === null) return send(ctx, head.status, head.headers.slice(), body);
  sending(ctx, head.status);
  deliver(ctx, head.status, finished.list, finished, body, text);
}

/** What a streamed response's head says of what follows it. */
export interface StreamedShape {
  /** Trailer fields may follow the body: an HTTP/2 stream waits for them after its last piece. */
  readonly trailers?: boolean;
  /** Nothing follows: the head is the whole response (an HTTP/2 stream ends with it). */
  readonly empty?: boolean;
}

/**
 * The head of a response whose body the caller writes piece by piece (a proxied one): where to
 * write it, or undefined when the response has none (HEAD, 204, 205, 304, `empty`; the head ends
 * it). `ctx.length` is left to the caller, which counts what it writes; `endResponse` ends it.
 */
export function startResponse(
  ctx: Ctx,
  status: number,
  headers: RawHeaders,
  shape?: StreamedShape,
): BodyTarget | undefined {
  const tap = ctx.tap?.head(status, headers);
  if (tap?.absorb) return new TappedTarget(undefined, tap);
  const sent = finalize(ctx, status, headers);
  const bodiless = ctx.method === 'HEAD' || NO_CONTENT.has(sent) || shape?.empty === true;
  if (shape?.trailers && !bodiless && 'stream' in ctx.res) awaitTrailers(ctx.res, headers, sent);
  else writeHead(ctx, sent, headers, bodiless && 'stream' in ctx.res);
  if (bodiless) {
    if (!('stream' in ctx.res)) ctx.res.end();
    // What a HEAD or a 304 leaves out is still the tap's to see (it does not store it).
    return tap && new TappedTarget(undefined, tap);
  }
  const target = ('stream' in ctx.res ? ctx.res.stream : ctx.res) as BodyTarget;
  return tap ? new TappedTarget(target, tap) : target;
}

/** An HTTP/2 head whose stream, after its last body piece, sends `res.trailers` (or ends empty). */
function awaitTrailers(res: Http2Response, headers: RawHeaders, status: number): void {
  const stream = res.stream;
  stream.respond(headerObject(headers, status), { waitForTrailers: true });
  stream.once('wantTrailers', () => {
    try {
      stream.sendTrailers(trailerObject(res.trailers ?? NO_FIELDS));
    } catch (error) {
      // A field node:http2 refuses: the response is cut rather than left open.
      stream.destroy(error as Error);
    }
  });
}

const NO_FIELDS: readonly string[] = Object.freeze([]);

/**
 * Ends a response begun by startResponse, with the trailer fields that came after its body: on
 * HTTP/2 when its head was sent to wait for them, on HTTP/1.1 in the last chunk when the client
 * sent `TE: trailers` (Node writes them only in a chunked body); otherwise they are dropped.
 */
export function endResponse(
  ctx: Ctx,
  target: BodyTarget,
  trailers: readonly string[] | undefined,
): void {
  if (trailers !== undefined && trailers.length > 0) {
    if ('stream' in ctx.res) ctx.res.trailers = trailers;
    else if (listsTrailers(ctx.req.headers.te)) addTrailers(ctx.res, trailers);
  }
  target.end();
}

function addTrailers(res: ServerResponse, trailers: readonly string[]): void {
  const pairs: [string, string][] = [];
  for (let i = 0; i < trailers.length; i += 2) pairs.push([trailers[i]!, trailers[i + 1]!]);
  try {
    res.addTrailers(pairs);
  } catch {
    // A name or value Node will not write: the response ends without trailers rather than fail.
  }
}

/** A connection after a switch of protocols: what the client sends, and where to write to it. */
export interface SwitchedConnection {
  readonly input: Readable;
  readonly output: Duplex;
}

/**
 * Agrees to a switch of protocols and hands back the connection for the new one: a 101 to an
 * HTTP/1.1 Upgrade (RFC 9110 §15.2.2), its time limit lifted, or a 200 to an HTTP/2 extended
 * CONNECT (RFC 8441 §5, without Sec-WebSocket-Accept), its stream. The head goes out with
 * `customHeaders` and `Server` like any other; the access log's line comes when it closes.
 */
export function switchProtocols(
  ctx: Ctx,
  protocol: string,
  headers: RawHeaders,
): SwitchedConnection {
  ctx.length = 0;
  if ('stream' in ctx.res) {
    const i = indexOfHeader(headers, 'sec-websocket-accept');
    if (i >= 0) headers.splice(i, 2);
    writeHead(ctx, finalize(ctx, 200, headers), headers, false);
    return { input: ctx.res.stream, output: ctx.res.stream };
  }
  const socket = ctx.upgrade;
  if (socket === undefined) throw new Error('no HTTP/1.1 upgrade to agree to');
  headers.push('Connection', 'Upgrade', 'Upgrade', protocol);
  ctx.res.writeHead(finalize(ctx, 101, headers), headers);
  ctx.res.flushHeaders();
  (socket as Duplex & { setTimeout(ms: number): void }).setTimeout(0);
  return { input: socket, output: socket };
}

/** A streamed response; resolves when the body is written, with backpressure respected. */
export async function sendStream(
  ctx: Ctx,
  status: number,
  headers: RawHeaders,
  body: Readable,
): Promise<void> {
  const tap = ctx.tap?.head(status, headers);
  if (tap?.absorb) return pipeline(body, tapWritable(tap));
  const sent = finalize(ctx, status, headers);
  const bodiless = ctx.method === 'HEAD' || NO_CONTENT.has(sent);
  ctx.length = 0;
  try {
    writeHead(ctx, sent, headers, bodiless && 'stream' in ctx.res);
  } catch (error) {
    // An HTTP/2 stream the client reset while the body was being opened refuses a head: the body
    // (an open file) must be let go here, as nothing else will take it.
    body.destroy();
    throw error;
  }
  if (bodiless) {
    body.destroy();
    tap?.end();
    if (!('stream' in ctx.res)) ctx.res.end();
    return;
  }
  const target = ('stream' in ctx.res ? ctx.res.stream : ctx.res) as Writable;
  if (tap) {
    body.on('data', (chunk: Buffer) => (ctx.length! += chunk.length));
    return pipeline(body, tapTransform(tap), target);
  }
  await pump(body, target, ctx);
}
