// The one place responses leave: every head is finished here (response-head.ts: the header
// rules of header-rules.ts, an errorConfig page's error status, no content fields without
// content), the status and length are recorded for the access log, HEAD responses and statuses
// without content (204, 205, 304) go without a body, an HTTP/2 response is answered on its stream
// (http2-head.ts), and a coder (dynamic compression: response-coder.ts) sees each head before the
// tap and codes its body.
import type { ServerResponse } from 'node:http';
import { pipeline as pipeStreams, type Duplex, type Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { pump } from './body-pump.js';
import type { Ctx } from './ctx.js';
import { FinishedHead } from './finished-head.js';
import { listsTrailers } from './hop-by-hop.js';
import type { Http2Response } from './http2-exchange.js';
import { headerObject, trailerObject } from './http2-head.js';
import { writeStoredHead } from './node-internals.js';
import { indexOfHeader } from './header-list.js';
import { applyHeaderRules, NO_RULES, type HeaderRules } from './header-rules.js';
import { codingTarget, type BodyCoding } from './response-coder.js';
import { finalize, NO_CONTENT, sending } from './response-head.js';
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
  const coding = ctx.coder?.head(ctx, status, headers, body === undefined ? 0 : byteLength(body));
  if (coding !== undefined) {
    coding.stream.end(body);
    sendCoded(ctx, status, headers, coding).catch(cutAlready);
    return;
  }
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

/**
 * A head that changes only with what it describes (a file held in the static cache, an error
 * page): the location's header rules are applied once per set of rules, not per response, and its
 * HTTP/2 and HTTP/1.1 forms are built once too (finished-head.ts). The last set's is at hand;
 * others', once there are several, are kept by their rules (a Plan makes one object per distinct
 * set: compile.ts).
 */
export class KeptHead {
  private lastRules: HeaderRules | undefined;
  /** null: not keepable for `lastRules` (a `{path}` value differs per request). */
  private last: FinishedHead | null = null;
  private others: WeakMap<HeaderRules, FinishedHead | null> | undefined;

  constructor(
    readonly headers: readonly string[],
    readonly status = 200,
  ) {
    // Such a response loses its content fields in finalize(); a kept head would keep them.
    if (NO_CONTENT.has(status))
      throw new Error(`a kept head needs a status with content, not ${status}`);
  }

  finishedFor(rules: HeaderRules): FinishedHead | null {
    if (rules === this.lastRules) return this.last;
    if (this.lastRules !== undefined)
      (this.others ??= new WeakMap()).set(this.lastRules, this.last);
    let finished = this.others?.get(rules);
    if (finished === undefined) {
      if (rules.hasPath) finished = null;
      else {
        const list = this.headers.slice();
        applyHeaderRules(list, rules, '');
        finished = new FinishedHead(list, this.status);
      }
    }
    this.lastRules = rules;
    this.last = finished;
    return finished;
  }
}

/**
 * `send(ctx, head.status, head.headers, body)`, with the head finalized once for every response
 * that carries it as it is: no cache watching, no errorConfig rendering, no `{path}` in the
 * header rules.
 */
export function sendKept(ctx: Ctx, head: KeptHead, body: Buffer, text?: string): void {
  const finished =
    ctx.tap === undefined &&
    ctx.coder === undefined &&
    ctx.errorStatus === undefined &&
    ctx.errorHeaders.length === 0
      ? head.finishedFor(ctx.resolved?.headerRules ?? NO_RULES)
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
  const coding = ctx.coder?.head(ctx, status, headers);
  if (coding !== undefined) {
    sendCoded(ctx, status, headers, coding).catch(cutAlready);
    return codingTarget(coding);
  }
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
 * CONNECT (RFC 8441 §5, without Sec-WebSocket-Accept), its stream. The head goes out with the
 * header rules like any other; the access log's line comes when it closes.
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
  const coding = ctx.coder?.head(ctx, status, headers);
  if (coding === undefined) return streamOut(ctx, status, headers, body, ctx);
  // The body goes when its coding does (a client gone destroys that).
  pipeStreams(body, coding.stream, () => undefined);
  body.on('data', () => coding.wrote());
  return sendCoded(ctx, status, headers, coding);
}

/**
 * A coded body, written into `coding.stream` by the caller. What the client gets is the coded
 * bytes: counted as they leave, so the count stands over a writer's own (of what it wrote in),
 * which it sets when it ends, before the coding's last piece comes out.
 */
function sendCoded(
  ctx: Ctx,
  status: number,
  headers: RawHeaders,
  coding: BodyCoding,
): Promise<void> {
  let sent = 0;
  coding.stream.on('data', (chunk: Buffer) => (ctx.length = sent += chunk.length));
  return streamOut(ctx, status, headers, coding.stream, { length: 0 });
}

/**
 * Nobody waits for a coded body sent from memory or written piece by piece: when it fails (the
 * client gone, the compressor failing), the pump has cut the response and destroyed the coding.
 */
function cutAlready(): void {}

/**
 * The head, written before this returns (a refused head throws), then the body with backpressure;
 * `counter` counts what is handed to the connection (the request's access-log length).
 */
function streamOut(
  ctx: Ctx,
  status: number,
  headers: RawHeaders,
  body: Readable,
  counter: { length: number | undefined },
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
    return Promise.resolve();
  }
  const target = ('stream' in ctx.res ? ctx.res.stream : ctx.res) as Writable;
  if (tap) {
    body.on('data', (chunk: Buffer) => (counter.length! += chunk.length));
    return pipeline(body, tapTransform(tap), target);
  }
  return pump(body, target, counter);
}

function byteLength(body: Buffer | string): number {
  return typeof body === 'string' ? Buffer.byteLength(body) : body.length;
}
