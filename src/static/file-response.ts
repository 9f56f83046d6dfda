// Answers a request for a regular file: preconditions, ranges, content-coding, then the body from
// memory (small files) or streamed from disk. Heads of 200 responses are built once per entry and
// variant (respond.ts KeptHead); a streamed one is copied per response (respond.ts appends to it).
// A file served as an errorConfig's page is the body of an error, not a resource of its own: no
// preconditions, no ranges and no validators, so a 404 stays a whole 404 page (CONTRACT.md, point 4)
// and nothing invites a client to revalidate or resume an error.
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream';
import { KeptHead, send, sendKept, sendStream } from '../http/respond.js';
import type { Ctx } from '../http/ctx.js';
import { HttpError } from '../http/http-error.js';
import { multipart, multipartBuffer, multipartStream } from './byteranges.js';
import { ENCODINGS, negotiateEncoding, type Encoding } from '../http/encoding-negotiation.js';
import { compressingStream } from './compression.js';
import { evaluatePreconditions, ifRangeHolds, variantTag } from './conditional.js';
import type { FileCache } from './file-cache.js';
import type { FileEntry } from './file-entries.js';
import { parseRange, type ByteRange } from './ranges.js';

/** The per-location settings that shape a file response. */
export interface FileFlags {
  readonly etag: boolean;
  readonly compression: boolean;
  /** The file is an errorConfig's page for an error (static-files.ts). */
  readonly errorPage: boolean;
}

/** The ETag a response carries: the variant's tag when compressed; undefined when ETags are off. */
function tagFor(
  entry: FileEntry,
  flags: FileFlags,
  encoding: Encoding | undefined,
): string | undefined {
  if (!flags.etag) return undefined;
  return encoding === undefined ? entry.etag : variantTag(entry.etag, encoding);
}

function pushValidators(
  list: string[],
  entry: FileEntry,
  tag: string | undefined,
  varies: boolean,
): string[] {
  list.push('Last-Modified', entry.lastModified);
  if (tag !== undefined) list.push('ETag', tag);
  if (varies) list.push('Vary', 'Accept-Encoding');
  return list;
}

/**
 * The 200 head for this coding and these flags, built on first use and kept on the entry (the
 * coding, the flags and the entry fix every value, Content-Length included). It runs for every
 * response from memory: the BodyForm is only made when the head is built.
 */
function okHeaders(
  entry: FileEntry,
  flags: FileFlags,
  varies: boolean,
  encoding: Encoding | undefined,
  length: number | undefined,
): KeptHead {
  const codingIndex = encoding === undefined ? 0 : ENCODINGS.indexOf(encoding) + 1;
  const slot = codingIndex * 4 + (flags.etag ? 1 : 0) + (varies ? 2 : 0);
  return (entry.heads[slot] ??= new KeptHead(
    buildOkHeaders(entry, flags, { varies, encoding, length }),
  ));
}

/** How this response's body represents the file: its coding, its length, and whether it varies. */
interface BodyForm {
  /** The file has coded variants: the response says Vary: Accept-Encoding. */
  readonly varies: boolean;
  /** The content-coding sent; undefined: the file as it is. */
  readonly encoding: Encoding | undefined;
  /** The body's length; undefined when streamed compressed, its length unknown. */
  readonly length: number | undefined;
}

function buildOkHeaders(
  entry: FileEntry,
  flags: FileFlags,
  { varies, encoding, length }: BodyForm,
): string[] {
  const list: string[] = [];
  if (length !== undefined) list.push('Content-Length', String(length));
  if (entry.contentType !== undefined) list.push('Content-Type', entry.contentType);
  if (encoding !== undefined) list.push('Content-Encoding', encoding);
  list.push('Accept-Ranges', 'bytes');
  return pushValidators(list, entry, tagFor(entry, flags, encoding), varies);
}

/** A precompressed copy of the file asked for (`app.js.br` beside `app.js`). */
export interface Precompressed {
  readonly encoding: Encoding;
  readonly file: FileEntry;
}

/**
 * The copy, under the file's own type and validators. Its headers are built per response, not
 * kept on the entry: the copy may come and go while the file stays the same.
 */
async function servePrecompressed(
  ctx: Ctx,
  entry: FileEntry,
  cache: FileCache,
  flags: FileFlags,
  { encoding, file }: Precompressed,
): Promise<void> {
  const headers = buildOkHeaders(entry, flags, { varies: true, encoding, length: file.size });
  if (file.cacheable) return send(ctx, 200, headers, await cache.body(file));
  return sendWhole(ctx, file, cache, undefined, headers);
}

/** The head of a file sent as an error's page: what the body is, nothing about the file. */
function errorPageHeaders(entry: FileEntry, { varies, encoding, length }: BodyForm): string[] {
  const list: string[] = [];
  if (length !== undefined) list.push('Content-Length', String(length));
  if (entry.contentType !== undefined) list.push('Content-Type', entry.contentType);
  if (encoding !== undefined) list.push('Content-Encoding', encoding);
  if (varies) list.push('Vary', 'Accept-Encoding');
  return list;
}

function isClientGone(ctx: Ctx, error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return (
    ctx.clientGone &&
    (code === 'ERR_STREAM_PREMATURE_CLOSE' || code === 'ECONNRESET' || code === 'EPIPE')
  );
}

/** Streams a body; a client that goes away mid-download ends it quietly (the file is closed). */
async function stream(ctx: Ctx, status: number, headers: string[], body: Readable): Promise<void> {
  try {
    await sendStream(ctx, status, headers, body);
  } catch (error) {
    body.destroy(); // closes the file if the response failed before the body was piped
    if (!isClientGone(ctx, error)) throw error;
  }
}

/** A 206's parts besides the file: the ranges, and the validators the 200 would carry. */
interface RangeResponse {
  readonly ranges: readonly ByteRange[];
  /** The identity body's ETag; undefined when ETags are off. */
  readonly tag: string | undefined;
  /** The file has coded variants: the response says Vary: Accept-Encoding. */
  readonly varies: boolean;
}

async function serveRanges(
  ctx: Ctx,
  entry: FileEntry,
  cache: FileCache,
  { ranges, tag, varies }: RangeResponse,
): Promise<void> {
  if (ranges.length === 1) {
    const { start, end } = ranges[0]!;
    const headers: string[] = [];
    if (entry.contentType !== undefined) headers.push('Content-Type', entry.contentType);
    headers.push(
      'Content-Length',
      String(end - start + 1),
      'Content-Range',
      `bytes ${start}-${end}/${entry.size}`,
    );
    headers.push('Accept-Ranges', 'bytes');
    pushValidators(headers, entry, tag, varies);
    if (entry.cacheable)
      return send(ctx, 206, headers, (await cache.body(entry)).subarray(start, end + 1));
    const handle = await cache.open(entry);
    return stream(ctx, 206, headers, handle.createReadStream({ start, end }));
  }
  const parts = multipart(ranges, entry.size, entry.contentType);
  const head = [
    'Content-Type',
    parts.contentType,
    'Content-Length',
    String(parts.length),
    'Accept-Ranges',
    'bytes',
  ];
  const headers = pushValidators(head, entry, tag, varies);
  if (entry.cacheable)
    return send(ctx, 206, headers, multipartBuffer(parts, ranges, await cache.body(entry)));
  return stream(ctx, 206, headers, multipartStream(parts, ranges, await cache.open(entry)));
}

/**
 * Synchronous for a file held in memory (the usual hit, a 304): no promise per request; anything
 * read from disk or compressed first returns one.
 */
export function serveFile(
  ctx: Ctx,
  entry: FileEntry,
  cache: FileCache,
  flags: FileFlags,
  precompressed?: Precompressed,
): Promise<void> | void {
  const request = ctx.req.headers;
  const method = ctx.method;
  const varies = flags.compression && (entry.compressible || precompressed !== undefined);
  const encoding =
    precompressed?.encoding ??
    (varies && entry.compressible ? negotiateEncoding(request['accept-encoding']) : undefined);
  if (flags.errorPage) return serveErrorPage(ctx, entry, cache, varies, encoding);

  const conditional =
    request['if-match'] !== undefined ||
    request['if-none-match'] !== undefined ||
    request['if-modified-since'] !== undefined ||
    request['if-unmodified-since'] !== undefined;
  if (conditional) {
    const tag = flags.etag ? entry.etag : undefined;
    const outcome = evaluatePreconditions(request, method, tag, entry.mtimeMs);
    if (outcome === 'failed') {
      throw new HttpError(412, 'precondition-failed', {
        headers: tag === undefined ? [] : [['ETag', tag]],
        detail: 'static files: precondition failed',
      });
    }
    // A 304 carries the validators the 200 would have carried, so the variant's tag.
    if (outcome === 'not-modified') {
      return send(ctx, 304, pushValidators([], entry, tagFor(entry, flags, encoding), varies));
    }
  }

  // Range is defined for GET only (RFC 9110 §14.2); ranges are always of the identity body.
  const range = request.range;
  if (range !== undefined && method === 'GET') {
    const tag = tagFor(entry, flags, undefined);
    const ifRange = request['if-range'];
    if (
      ifRange === undefined ||
      (typeof ifRange === 'string' && ifRangeHolds(ifRange, tag, entry.mtimeMs))
    ) {
      const ranges = parseRange(range, entry.size);
      if (ranges.kind === 'unsatisfiable') {
        throw new HttpError(416, 'range-not-satisfiable', {
          headers: [['Content-Range', `bytes */${entry.size}`]],
          detail: 'static files: range not satisfiable',
        });
      }
      if (ranges.kind === 'ranges')
        return serveRanges(ctx, entry, cache, { ranges: ranges.ranges, tag, varies });
    }
  }

  if (precompressed !== undefined)
    return servePrecompressed(ctx, entry, cache, flags, precompressed);
  if (entry.cacheable) {
    // HEAD takes the same path: its Content-Length is the compressed length GET would send.
    const body = encoding === undefined ? cache.body(entry) : cache.variant(entry, encoding);
    // The file as it is goes out as the text made when it was read (a coded variant is made anew).
    const send = (bytes: Buffer) =>
      sendKept(
        ctx,
        okHeaders(entry, flags, varies, encoding, bytes.length),
        bytes,
        encoding === undefined ? entry.bodyText : undefined,
      );
    return body instanceof Promise ? body.then(send) : send(body);
  }
  // A large compressed body is streamed, so its length is unknown: chunked, no Content-Length.
  return sendWhole(
    ctx,
    entry,
    cache,
    encoding,
    okHeaders(
      entry,
      flags,
      varies,
      encoding,
      encoding === undefined ? entry.size : undefined,
    ).headers.slice(),
  );
}

/** The whole file, from disk, compressed on the way when `encoding` is set. */
async function sendWhole(
  ctx: Ctx,
  entry: FileEntry,
  cache: FileCache,
  encoding: Encoding | undefined,
  headers: string[],
): Promise<void> {
  if (ctx.method === 'HEAD') return send(ctx, 200, headers);
  const handle = await cache.open(entry);
  const file = handle.createReadStream();
  if (encoding === undefined) return stream(ctx, 200, headers, file);
  // pipeline() destroys the file stream (closing the handle) when the compressor is destroyed.
  const compressed = pipeline(file, compressingStream(encoding, entry.size), () => {});
  return stream(ctx, 200, headers, compressed);
}

/** The file as an errorConfig's page: sent as 200 here, respond.ts gives it the error's status. */
async function serveErrorPage(
  ctx: Ctx,
  entry: FileEntry,
  cache: FileCache,
  varies: boolean,
  encoding: Encoding | undefined,
): Promise<void> {
  if (entry.cacheable) {
    const body =
      encoding === undefined ? await cache.body(entry) : await cache.variant(entry, encoding);
    return send(ctx, 200, errorPageHeaders(entry, { varies, encoding, length: body.length }), body);
  }
  return sendWhole(
    ctx,
    entry,
    cache,
    encoding,
    errorPageHeaders(entry, {
      varies,
      encoding,
      length: encoding === undefined ? entry.size : undefined,
    }),
  );
}
