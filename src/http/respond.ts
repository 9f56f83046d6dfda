// The one place responses leave: it adds `customHeaders` (names the response does not already
// have, `{path}` filled in), sets `Server: Portico` (or customHeaders' own `Server`), keeps an errorConfig page's error status,
// records status and length for the access log, leaves HEAD responses and statuses without content
// (204, 205, 304) without a body, and keeps HTTP/1-only headers out of HTTP/2 responses.
import { Transform, Writable, type Duplex, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Ctx } from './ctx.js';
import type { CustomHeader } from './resolved.js';
import { CONNECTION_SPECIFIC } from './hop-by-hop.js';
import { nodeFields, writeCheckedHead, type NodeFields } from './node-fields.js';
import { TappedTarget, type BodyTap, type BodyTarget } from './response-tap.js';

/** Response headers as a flat [name, value, name, value…] list, the form Node writes fastest. */
export type RawHeaders = string[];

const SERVER = 'Portico';
// What Node accepts in a header value; a `{path}` that would make a value invalid skips it.
const VALID_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
// Statuses whose responses have no content (RFC 9110 §6.4.1, §15.3.6), whatever was meant to go in
// them: a nonStandardCodes 204 goes through the error flow (REFERENCE §6), and an errorConfig's page
// for it is sent with its status. (No 1xx gets here: no stage makes one, and the validator refuses
// one as a nonStandardCodes scode.)
const NO_CONTENT = new Set([204, 205, 304]);
// Fields about content, left out of such a response: a 204 MUST NOT carry Content-Length or
// Transfer-Encoding (RFC 9110 §8.6, RFC 9112 §6.1), a 304's would be taken for the selected
// representation's, and the type or coding of a page that is not sent describes nothing.
const CONTENT_FIELDS = new Set([
  'content-type',
  'content-length',
  'content-encoding',
  'transfer-encoding',
]);

export function hasNoContent(status: number): boolean {
  return NO_CONTENT.has(status);
}

// Header names are compared by length first: most differ there, and no string is allocated.
function indexOfHeader(headers: readonly string[], lower: string): number {
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i]!;
    if (name.length === lower.length && name.toLowerCase() === lower) return i;
  }
  return -1;
}

function hasHeader(headers: readonly string[], lower: string): boolean {
  return indexOfHeader(headers, lower) >= 0;
}

function finalize(ctx: Ctx, status: number, headers: RawHeaders): number {
  for (const [name, value] of ctx.errorHeaders)
    if (!hasHeader(headers, name.toLowerCase())) headers.push(name, value);
  // Whatever a backend said, the Server is Portico's, or the one customHeaders names.
  for (let i = indexOfHeader(headers, 'server'); i >= 0; i = indexOfHeader(headers, 'server'))
    headers.splice(i, 2);
  addCustomAndServer(headers, ctx.resolved?.customHeaders, ctx.originalPath);
  // A page rendered for an error by an errorConfig is still that error (CONTRACT.md, point 4).
  const sent = ctx.errorStatus !== undefined && status < 300 ? ctx.errorStatus : status;
  if (NO_CONTENT.has(sent)) withoutContentFields(headers, sent);
  sending(ctx, sent);
  return sent;
}

/** customHeaders the response does not already have, then `Server`. */
function addCustomAndServer(
  headers: RawHeaders,
  custom: readonly CustomHeader[] | undefined,
  originalPath: string,
): void {
  let server = SERVER;
  if (custom) {
    for (const h of custom) {
      const value = h.hasPath ? h.value.replaceAll('{path}', originalPath) : h.value;
      if (h.hasPath && !VALID_VALUE.test(value)) continue;
      if (h.lower === 'server') server = value;
      else if (!hasHeader(headers, h.lower)) headers.push(h.name, value);
    }
  }
  headers.push('Server', server);
}

/** The status is final: the access log's, and the `timeout` limit no longer applies. */
function sending(ctx: Ctx, status: number): void {
  ctx.status = status;
  ctx.deadlines?.remove(ctx);
}

function withoutContentFields(headers: RawHeaders, status: number): void {
  for (let i = headers.length - 2; i >= 0; i -= 2)
    if (CONTENT_FIELDS.has(headers[i]!.toLowerCase())) headers.splice(i, 2);
  // Node frames a 205 like any response: without a length it would send an empty chunked body, which
  // a client that knows 205 has no content would read as the start of the next response.
  if (status === 205) headers.push('Content-Length', '0');
}

// Connection-specific fields are malformed in HTTP/2, and Node refuses a head that has one by
// resetting the stream (ERR_HTTP2_INVALID_CONNECTION_HEADERS). Whoever added it (a customHeaders
// entry, a module copying a backend's head), the HTTP/2 response goes without it.
function isConnectionSpecific(lower: string, value: string): boolean {
  // Only names of these lengths (te, upgrade, connection, keep-alive, http2-settings…) can be one.
  const n = lower.length;
  if (n !== 2 && n !== 7 && n !== 10 && n !== 14 && n !== 16 && n !== 17) return false;
  // `TE: trailers` is the one TE allowed.
  return lower === 'te'
    ? value.trim().toLowerCase() !== 'trailers'
    : CONNECTION_SPECIFIC.has(lower);
}

// HTTP/2 field names are lower case (RFC 9113 §8.2.1). The names Portico writes map to one
// lower-case string each, so node:http2 gets the same strings every time rather than new ones to
// lower-case and hash per field (a profile of bench/h2.sh).
const LOWER_NAMES = new Map(
  [
    'Accept-Ranges',
    'Age',
    'Allow',
    'Cache-Control',
    'Content-Encoding',
    'Content-Length',
    'Content-Range',
    'Content-Type',
    'Date',
    'ETag',
    'Last-Modified',
    'Location',
    'Server',
    'Vary',
    'WWW-Authenticate',
  ].map((name) => [name, name.toLowerCase()]),
);

/** An HTTP/2 response head: pseudo-field and lower-case names, repeated ones (Set-Cookie) as arrays. */
type HeaderObject = Record<string, string | string[] | number>;

// node:http2 adds a missing `date` to every response head it copies, with a store that misses its
// inline cache on every response once a garbage collection has run before the first one (always
// so in Portico): ~4,500 instructions per response under callgrind, more than any other single
// item Portico added to an HTTP/2 hit. A head with its own `date` skips that store. Formatted once
// per second.
let dateSecond = -1;
let dateValue = '';

function currentDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateValue = new Date(second * 1000).toUTCString();
  }
  return dateValue;
}

/** Repeated names (Set-Cookie) become arrays; `date` is added when missing. */
function headerObject(headers: readonly string[], status: number): HeaderObject {
  const out: HeaderObject = { ':status': status };
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i]!;
    const lower = LOWER_NAMES.get(name) ?? name.toLowerCase();
    const value = headers[i + 1]!;
    if (isConnectionSpecific(lower, value)) continue;
    const existing = out[lower];
    out[lower] =
      existing === undefined
        ? value
        : Array.isArray(existing)
          ? [...existing, value]
          : [String(existing), value];
  }
  out.date ??= currentDate();
  return out;
}

/** Writes the head: on the HTTP/2 stream itself (core API), or with one writeHead over HTTP/1. */
function writeHead(ctx: Ctx, status: number, headers: RawHeaders, endStream: boolean): void {
  if ('stream' in ctx.res) ctx.res.stream.respond(headerObject(headers, status), { endStream });
  else ctx.res.writeHead(status, headers as unknown as Record<string, string>);
}

/** A complete response from memory. */
export function send(ctx: Ctx, status: number, headers: RawHeaders, body?: Buffer | string): void {
  const tap = ctx.tap?.head(status, headers);
  if (tap) {
    if (body !== undefined) tap.data(typeof body === 'string' ? Buffer.from(body) : body);
    tap.end();
    if (tap.absorb) return;
  }
  deliver(ctx, finalize(ctx, status, headers), headers, undefined, body);
}

/** A finalized head and its body from memory; `kept` holds the head's forms built once. */
function deliver(
  ctx: Ctx,
  status: number,
  headers: readonly string[],
  kept: FinishedHead | undefined,
  body: Buffer | string | undefined,
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
  const fields = kept?.nodeFields;
  if (fields === undefined) ctx.res.writeHead(status, headers as unknown as Record<string, string>);
  else writeCheckedHead(ctx.res, status, fields);
  if (bodiless) ctx.res.end();
  else ctx.res.end(body);
}

/**
 * A kept head finished for one location's customHeaders, and its HTTP/2 form once asked for, its
 * `date` brought up to date each time (node:http2 copies the object before respond() returns)
 * unless customHeaders set one; its HTTP/1.1 form, checked once, too.
 */
class FinishedHead {
  private object: HeaderObject | undefined;
  private readonly datedHere: boolean;
  private fields: NodeFields | undefined | null = null;

  constructor(
    readonly list: readonly string[],
    private readonly status: number,
  ) {
    this.datedHere = !hasHeader(list, 'date');
  }

  get headerObject(): HeaderObject {
    const object = (this.object ??= headerObject(this.list, this.status));
    if (this.datedHere) object.date = currentDate();
    return object;
  }

  /** Undefined when Node's store is not at hand or a field is invalid: writeHead checks the list. */
  get nodeFields(): NodeFields | undefined {
    if (this.fields === null) this.fields = nodeFields(this.list);
    return this.fields;
  }
}

// What a head is finished for when a request has no location's settings.
const NO_CUSTOM: readonly CustomHeader[] = Object.freeze([]);

/**
 * A head that changes only with what it describes (a file held in the static cache, an error
 * page): the location's customHeaders and `Server` are added once per location, not per response,
 * and the HTTP/2 head is built once too (issue 15: building it was the largest item of Portico's
 * own work in a profile of bench/h2.sh). The last location's is at hand; others', once there are
 * several, are kept by their customHeaders (a Plan makes one list per distinct set: compile.ts).
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
export function sendKept(ctx: Ctx, head: KeptHead, body: Buffer): void {
  const finished =
    ctx.tap === undefined && ctx.errorStatus === undefined && ctx.errorHeaders.length === 0
      ? head.finishedFor(ctx.resolved?.customHeaders ?? NO_CUSTOM)
      : null;
  if (finished === null) return send(ctx, head.status, head.headers.slice(), body);
  sending(ctx, head.status);
  deliver(ctx, head.status, finished.list, finished, body);
}

/**
 * The head of a response whose body the caller writes piece by piece (a proxied one): where to
 * write it, or undefined when the response has none (HEAD, 204, 205, 304; the head ends it).
 * `ctx.length` is left to the caller, which counts what it writes.
 */
export function startResponse(
  ctx: Ctx,
  status: number,
  headers: RawHeaders,
): BodyTarget | undefined {
  const tap = ctx.tap?.head(status, headers);
  if (tap?.absorb) return new TappedTarget(undefined, tap);
  const sent = finalize(ctx, status, headers);
  const bodiless = ctx.method === 'HEAD' || NO_CONTENT.has(sent);
  writeHead(ctx, sent, headers, bodiless && 'stream' in ctx.res);
  if (bodiless) {
    if (!('stream' in ctx.res)) ctx.res.end();
    // What a HEAD or a 304 leaves out is still the tap's to see (it does not store it).
    return tap && new TappedTarget(undefined, tap);
  }
  const target = ('stream' in ctx.res ? ctx.res.stream : ctx.res) as BodyTarget;
  return tap ? new TappedTarget(target, tap) : target;
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
  ctx.res.writeHead(finalize(ctx, 101, headers), headers as unknown as Record<string, string>);
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
  writeHead(ctx, sent, headers, bodiless && 'stream' in ctx.res);
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

/**
 * `body` into the response with backpressure, settling as stream.pipeline would (resolved once
 * the response is finished, rejected when it closes first or either side fails, the body then
 * destroyed), without the AbortController and DOMException pipeline makes for every call: a
 * tenth of the CPU of a small FastCGI response (bench/fastcgi.sh profile). What was handed to the
 * connection is counted as it goes, so a cut transfer logs what got out.
 */
function pump(body: Readable, target: Writable, ctx: Ctx): Promise<void> {
  // A response whose client left before the body began has had its 'close': none comes to wait
  // for, and a write to it only returns false (a CGI answer found its client gone and held its
  // process slot for ever).
  if (target.destroyed) {
    body.destroy();
    return Promise.reject(prematureClose());
  }
  return new Promise((resolve, reject) => {
    const resume = () => body.resume();
    const onData = (chunk: Buffer) => {
      ctx.length! += chunk.length;
      if (target.write(chunk)) return;
      body.pause();
      target.once('drain', resume);
    };
    const onEnd = () => target.end();
    const settle = () => {
      body.off('data', onData).off('end', onEnd).off('error', onBodyError);
      target.off('drain', resume).off('finish', onFinish).off('close', onClose);
      target.off('error', onTargetError);
    };
    const onFinish = () => {
      settle();
      resolve();
    };
    const onBodyError = (error: Error) => {
      settle();
      target.destroy(error);
      reject(error);
    };
    const onTargetError = (error: Error) => {
      settle();
      body.destroy();
      reject(error);
    };
    const onClose = () => {
      settle();
      body.destroy();
      reject(prematureClose());
    };
    body.on('data', onData).once('end', onEnd).once('error', onBodyError);
    target.once('finish', onFinish).once('close', onClose).once('error', onTargetError);
    // A body its producer paused (a gateway's, after its header block) flows only when asked.
    body.resume();
  });
}

function prematureClose(): Error {
  return Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
}

/** Feeds a tap alone (an absorbed response). */
function tapWritable(tap: BodyTap): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      tap.data(chunk);
      done();
    },
    final(done) {
      tap.end();
      done();
    },
  });
}

/** Shows each piece to a tap on its way to the client. */
function tapTransform(tap: BodyTap): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      tap.data(chunk);
      done(null, chunk);
    },
    flush(done) {
      tap.end();
      done();
    },
  });
}
