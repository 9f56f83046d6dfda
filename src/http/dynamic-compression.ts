// Compression of dynamic responses (proxied, gateways', Python's) as they stream, decided at the
// head: a response of a compressible type gets `Vary: Accept-Encoding`, and when the client accepts
// a coding, `Content-Encoding`, no `Content-Length` (chunked on HTTP/1.1) and a weak ETag (the coded
// bytes are not the origin's). Left as they are: a response already coded, one marked
// `no-transform`, a partial one, one without content, one shorter than MIN_COMPRESSED_SIZE, and
// server-sent events (each event must reach the client when it is written).
import { isCompressibleType, mediaType } from './compressible-types.js';
import { negotiateEncoding } from './encoding-negotiation.js';
import type { BodyCoding, CodedRequest, ResponseCoder } from './response-coder.js';
import { indexOfHeader } from './header-list.js';
import { NO_CONTENT } from './response-head.js';
import { bodyCoding } from './stream-compressors.js';

/**
 * Caddy's minimum. Below it the coding saves less than the response's own head weighs, while the
 * compressor's state (kilobytes to allocate and clear) costs the same as for a page.
 */
export const MIN_COMPRESSED_SIZE = 512;

const NO_TRANSFORM = /(?:^|,)\s*no-transform\s*(?:,|$)/i;
const VARIES_ALREADY = /(?:^|,)\s*(?:accept-encoding|\*)\s*(?:,|$)/i;

/** The compression stage's coder (ctx.coder), for the stages after it. */
export class DynamicCompression implements ResponseCoder {
  constructor(readonly keyedByChoice: boolean) {}

  head(
    ctx: CodedRequest,
    status: number,
    headers: string[],
    length?: number,
  ): BodyCoding | undefined {
    const encoding = negotiateEncoding(ctx.req.headers['accept-encoding']);
    // A 304 carries the validator its 200 would have (RFC 9110 §15.4.5): the weak one when coded.
    // Its type, when it has one, tells a 200 that would not be; without one, weak is the safe side
    // (a strong tag on a coded copy would let a range of the plain bytes be merged into it).
    if (status === 304) {
      if (encoding !== undefined && wouldCode304(headers))
        weakenTag(headers, indexOfHeader(headers, 'etag'));
      return undefined;
    }
    const errorStatus = ctx.errorStatus;
    if (status < 200 || status === 206 || NO_CONTENT.has(status)) return undefined;
    if (errorStatus !== undefined && NO_CONTENT.has(errorStatus)) return undefined;
    let type = '';
    let declared: number | undefined;
    let tag = -1;
    let vary = -1;
    let varies = false;
    for (let i = 0; i < headers.length; i += 2) {
      const name = headers[i]!;
      // Compared by length first: most names differ there, and no string is allocated.
      switch (name.length) {
        case 4: {
          const lower = name.toLowerCase();
          if (lower === 'etag') tag = i;
          else if (lower === 'vary') {
            if (vary < 0) vary = i;
            varies ||= VARIES_ALREADY.test(headers[i + 1]!);
          }
          break;
        }
        case 12:
          if (name.toLowerCase() === 'content-type') type = mediaType(headers[i + 1]);
          break;
        case 13: {
          const lower = name.toLowerCase();
          if (lower === 'content-range') return undefined;
          if (lower === 'cache-control' && NO_TRANSFORM.test(headers[i + 1]!)) return undefined;
          break;
        }
        case 14:
          if (name.toLowerCase() === 'content-length') declared = Number(headers[i + 1]);
          break;
        case 16:
          if (name.toLowerCase() === 'content-encoding') return undefined;
          break;
      }
    }
    if (!isCompressibleType(type) || type === 'text/event-stream') return undefined;
    const size = length ?? declared;
    if (size !== undefined && size < MIN_COMPRESSED_SIZE) return undefined;
    if (!varies) {
      if (vary < 0) headers.push('Vary', 'Accept-Encoding');
      else headers[vary + 1] = `${headers[vary + 1]!}, Accept-Encoding`;
    }
    if (encoding === undefined) return undefined;
    weakenTag(headers, tag);
    // The coded bytes have no ranges of their own: Range requests are never coded (nginx's gzip
    // filter clears Accept-Ranges too).
    for (let i = headers.length - 2; i >= 0; i -= 2) {
      const name = headers[i]!;
      if (
        (name.length === 14 && name.toLowerCase() === 'content-length') ||
        (name.length === 13 && name.toLowerCase() === 'accept-ranges')
      )
        headers.splice(i, 2);
    }
    headers.push('Content-Encoding', encoding);
    return bodyCoding(encoding, size, length !== undefined);
  }
}

/** Whether the 200 a 304 stands for would be coded: not when its fields say otherwise. */
function wouldCode304(headers: readonly string[]): boolean {
  const type = indexOfHeader(headers, 'content-type');
  if (type >= 0 && !isCompressibleType(mediaType(headers[type + 1]))) return false;
  if (indexOfHeader(headers, 'content-encoding') >= 0) return false;
  const control = indexOfHeader(headers, 'cache-control');
  return control < 0 || !NO_TRANSFORM.test(headers[control + 1]!);
}

/** A strong entity tag made weak (W/"…"); a weak one, or none (-1), is left. */
function weakenTag(headers: string[], at: number): void {
  if (at < 0) return;
  const value = headers[at + 1]!.trim();
  if (value.startsWith('"')) headers[at + 1] = `W/${value}`;
}
