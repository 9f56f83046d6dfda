// Content-coding: which coding a request accepts (RFC 9110 §12.5.3, q-values honoured), which
// files are worth compressing, and the compressors themselves.
import { promisify } from 'node:util';
import { extname } from 'node:path';
import type { Transform } from 'node:stream';
import zlib from 'node:zlib';

export type Encoding = 'br' | 'gzip' | 'deflate';
/** In preference order: among equal q-values the first wins. */
export const ENCODINGS: readonly Encoding[] = ['br', 'gzip', 'deflate'];

/** Bodies of this size or less are sent as they are: the coding's framing would eat the gain (Ferron's rule too). */
export const MAX_UNCOMPRESSED_SIZE = 256;

// Ferron's list of already-compressed extensions (REFERENCE-behaviour.md §8), compared
// case-insensitively here.
const COMPRESSED_EXTENSIONS = new Set(
  (
    '7z air amlx apk apng appinstaller appx appxbundle arj au avif bdoc boz br bz bz2 caf class doc docx dot dvi ear ' +
    'epub flv gdoc gif gsheet gslides gz iges igs jar jnlp jp2 jpe jpeg jpf jpg jpg2 jpgm jpm jpx kmz latex m1v m2a ' +
    'm2v m3a m4a mesh mk3d mks mkv mov mp2 mp2a mp3 mp4 mp4a mp4v mpe mpeg mpg mpg4 mpga msg msh msix msixbundle odg ' +
    'odp ods odt oga ogg ogv ogx opus p12 pdf pfx pgp pkpass png pot pps ppt pptx qt ser silo sit snd spx stpxz stpz ' +
    'swf tif tiff ubj usdz vbox-extpack vrml war wav weba webm wmv wrl x3dbz x3dvz xla xlc xlm xls xlsx xlt xlw xpi ' +
    'svgz xps zip zst'
  ).split(' '),
);
// What compresses: an allow list, as nginx's gzip_types and Caddy's encode
// matcher are, so an unknown binary (application/octet-stream, a file without a known extension)
// is sent as it is, with its Content-Length, instead of costing CPU for nothing.
/** Types other than text/* that are text underneath or compress well; docs/running.md lists them. */
export const COMPRESSIBLE_TYPES: ReadonlySet<string> = new Set([
  'application/javascript',
  'application/x-javascript',
  'application/ecmascript',
  'application/json',
  'application/xml',
  'application/xhtml+xml',
  'application/rss+xml',
  'application/atom+xml',
  'application/wasm',
  'application/x-sh',
  'application/x-httpd-php',
  'application/rtf',
  'application/toml',
  'application/yaml',
  'application/x-yaml',
  'application/graphql',
  'application/sql',
  'application/vnd.ms-fontobject',
  'application/x-font-ttf',
  'application/x-font-otf',
  'font/ttf',
  'font/otf',
  'font/collection',
  'image/svg+xml',
  'image/bmp',
  'image/x-ms-bmp',
  'image/x-icon',
  'image/vnd.microsoft.icon',
]);

/** Whether a file of this name and Content-Type is worth compressing (size aside). */
export function isCompressible(name: string, contentType: string | undefined): boolean {
  // Ferron's list still applies first: `.svgz` is image/svg+xml and already gzip.
  if (contentType === undefined || COMPRESSED_EXTENSIONS.has(extname(name).slice(1).toLowerCase()))
    return false;
  const semi = contentType.indexOf(';');
  const type = (semi < 0 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
  return (
    type.startsWith('text/') ||
    type.endsWith('+json') ||
    type.endsWith('+xml') ||
    COMPRESSIBLE_TYPES.has(type)
  );
}

const Q_VALUE = /^\s*q\s*=\s*(0(?:\.\d{0,3})?|1(?:\.0{0,3})?)\s*$/i;

/** The codings this Accept-Encoding accepts, best first; empty when identity is preferred. */
function parseAcceptEncoding(header: string): readonly Encoding[] {
  const q = new Map<string, number>();
  for (const member of header.split(',')) {
    const semi = member.indexOf(';');
    const coding = (semi < 0 ? member : member.slice(0, semi)).trim().toLowerCase();
    if (coding === '') continue;
    let weight = 1;
    if (semi >= 0) {
      const match = Q_VALUE.exec(member.slice(semi + 1));
      if (!match) continue; // a member with a broken weight is ignored, not guessed at
      weight = Number(match[1]);
    }
    // x-gzip is gzip (RFC 9110 §8.4.1.3); a repeated coding keeps its first weight.
    const name = coding === 'x-gzip' ? 'gzip' : coding;
    if (!q.has(name)) q.set(name, weight);
  }
  const any = q.get('*');
  const weighted = ENCODINGS.map((encoding) => ({ encoding, weight: q.get(encoding) ?? any ?? 0 }))
    .filter((w) => w.weight > 0)
    // Stable: among equal weights, ENCODINGS' order stands.
    .sort((a, b) => b.weight - a.weight);
  // identity is acceptable unless refused; it wins only when the client ranks it strictly higher.
  const identity = q.get('identity');
  if (weighted.length > 0 && identity !== undefined && identity > weighted[0]!.weight) return [];
  return weighted.map((w) => w.encoding);
}

// Clients send few distinct Accept-Encoding values, so the answer is memoized per header value
// (bounded: emptied when full) and the hot path parses nothing.
const MEMO_LIMIT = 256;
const memo = new Map<string, readonly Encoding[]>();
const NONE: readonly Encoding[] = [];

/** The codings a request accepts, best first; empty (identity) without the header. */
export function acceptedEncodings(header: string | undefined): readonly Encoding[] {
  if (header === undefined || header === '') return NONE;
  const known = memo.get(header);
  if (known !== undefined) return known;
  const accepted = parseAcceptEncoding(header);
  if (memo.size >= MEMO_LIMIT) memo.clear();
  memo.set(header, accepted);
  return accepted;
}

/** The coding to send for this Accept-Encoding; undefined means identity. No header: identity. */
export function negotiateEncoding(header: string | undefined): Encoding | undefined {
  return acceptedEncodings(header)[0];
}

/** A compressing stream for a body streamed from disk: brotli at quality 4 keeps up with the disk. */
export function compressingStream(encoding: Encoding, sizeHint: number): Transform {
  switch (encoding) {
    case 'br':
      return zlib.createBrotliCompress({
        params: {
          [zlib.constants.BROTLI_PARAM_QUALITY]: 4,
          [zlib.constants.BROTLI_PARAM_SIZE_HINT]: sizeHint,
        },
      });
    case 'gzip':
      return zlib.createGzip();
    case 'deflate':
      return zlib.createDeflate();
  }
}

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);
const deflate = promisify(zlib.deflate);

// A cached variant is compressed once and served many times, so it gets more effort. Measured on
// minified JavaScript: brotli 11 costs about 1 ms per KiB (60 ms for 64 KiB, 400 ms for 300 KiB)
// for 8–10 % smaller output than quality 6 (8 ms for 300 KiB). Quality 11 is used up to 32 KiB,
// where the first request waits at most some 30 ms; the work runs on libuv's pool, never on the
// event loop.
const MAX_BROTLI_11_SIZE = 32 * 1024;

/** Compresses a small file's whole body for the cache. */
export function compressBuffer(body: Buffer, encoding: Encoding): Promise<Buffer> {
  switch (encoding) {
    case 'br':
      return brotli(body, {
        params: {
          [zlib.constants.BROTLI_PARAM_QUALITY]: body.length <= MAX_BROTLI_11_SIZE ? 11 : 6,
          [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length,
        },
      });
    case 'gzip':
      return gzip(body, { level: 9 });
    case 'deflate':
      return deflate(body, { level: 9 });
  }
}
