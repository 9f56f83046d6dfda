// What the cache keeps of a response, and the rules for keeping it (RFC 9111 §3), for updating it
// from a 304 (§3.2, §4.3.4) and for the copy a client gets (§5.1 Age).
import { isHopByHop } from '../../http/hop-by-hop.js';
import { JOINED_BODY_MAX, type RawHeaders } from '../../http/respond.js';
import type { Directives } from './cache-control.js';
import { responseDirectives } from './response-directives.js';
import { CACHE_STATUS } from './cache-status.js';
import { fieldValue, listMembers, withoutFields } from './fields.js';
import {
  freshnessLifetime,
  hasExplicitLifetime,
  initialAge,
  type Arrival,
  type Judged,
} from './freshness.js';

export interface StoredResponse extends Judged {
  /** The URL key (variants.ts). */
  readonly primary: string;
  readonly status: number;
  /** As the origin sent them, less hop-by-hop fields, Age and what must not be stored. */
  readonly headers: RawHeaders;
  readonly body: Buffer;
  /** The request fields its Vary names (with cacheVaryHeaders), and their values then. */
  readonly varyFields: readonly string[];
  readonly varyValues: readonly (string | undefined)[];
  readonly etag: string | undefined;
  readonly lastModified: string | undefined;
  /** Of the body and headers, for the store's byte bound. */
  readonly size: number;
}

// Statuses whose meaning RFC 9110 defines and that the cache can replay whole: `must-understand`
// (§5.2.2.3) lets only these be stored. 206 and 304 are never stored: the cache keeps whole
// representations only.
const UNDERSTOOD = new Set([
  200, 201, 202, 203, 204, 205, 300, 301, 302, 303, 307, 308, 400, 401, 402, 403, 404, 405, 406,
  407, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 421, 422, 426, 500, 501, 502, 503, 504,
  505,
]);

/** The request side of storing: does it carry credentials (§3.5). */
export interface StoreRequest {
  readonly authorization: boolean;
  /** cacheIgnoreHeaders, lower-cased: never stored, so a Set-Cookie listed there does not refuse. */
  readonly ignored: ReadonlySet<string>;
}

/**
 * Why a response to a GET cannot be stored (§3), or undefined when it can. Portico adds two rules:
 * a response with no explicit lifetime and no validator is refused (it could never be reused), and
 * one that sets a cookie is refused unless `cacheIgnoreHeaders` drops Set-Cookie from the stored
 * copy, so that one user's cookie is never handed to another (nginx and Varnish do the same).
 */
export function refusal(
  status: number,
  headers: RawHeaders,
  directives: Directives,
  request: StoreRequest,
): string | undefined {
  if (status === 206) return 'partial';
  if (status === 304 || status < 200) return 'status';
  const understood = UNDERSTOOD.has(status);
  if (directives.has('must-understand')) {
    if (!understood) return 'status';
  } else if (directives.has('no-store')) return 'no-store';
  // A qualified private="…" only keeps those fields out of the stored copy (§5.2.2.7).
  if (directives.has('private') && directives.argument('private') === undefined) return 'private';
  if (
    request.authorization &&
    !directives.has('public') &&
    !directives.has('s-maxage') &&
    !directives.has('must-revalidate')
  )
    return 'authorization';
  if (listMembers(fieldValue(headers, 'vary')).includes('*')) return 'vary-star';
  if (fieldValue(headers, 'set-cookie') !== undefined && !request.ignored.has('set-cookie'))
    return 'set-cookie';
  const validator =
    fieldValue(headers, 'etag') !== undefined || fieldValue(headers, 'last-modified') !== undefined;
  if (!hasExplicitLifetime(headers, directives) && !validator) return 'no-freshness';
  return undefined;
}

/** The fields a stored copy leaves out: its own Age and Cache-Status, and those named to drop. */
function keptFields(headers: RawHeaders, directives: Directives, ignored: ReadonlySet<string>) {
  const drop = new Set(ignored);
  drop.add('age');
  drop.add(CACHE_STATUS.toLowerCase());
  // Qualified no-cache and private name fields that may not be reused or stored (§5.2.2.4, §5.2.2.7).
  for (const name of directives.fields('no-cache')) drop.add(name);
  for (const name of directives.fields('private')) drop.add(name);
  const connection = fieldValue(headers, 'connection');
  const listed = connection === undefined ? undefined : new Set(listMembers(connection));
  const out: RawHeaders = [];
  for (let i = 0; i < headers.length; i += 2) {
    const lower = headers[i]!.toLowerCase();
    if (!drop.has(lower) && !isHopByHop(lower, listed)) out.push(headers[i]!, headers[i + 1]!);
  }
  return out;
}

export interface Received extends Arrival {
  readonly primary: string;
  readonly body: Buffer;
  readonly varyFields: readonly string[];
  readonly varyValues: readonly (string | undefined)[];
  readonly ignored: ReadonlySet<string>;
}

export function storedResponse(r: Received): StoredResponse {
  const headers = keptFields(r.headers, r.directives, r.ignored);
  // A recipient with a clock adds the Date a response lacks (RFC 9110 §6.6.1).
  if (fieldValue(headers, 'date') === undefined)
    headers.push('Date', new Date(r.responseTime).toUTCString());
  return {
    primary: r.primary,
    status: r.status,
    headers,
    body: r.body,
    varyFields: r.varyFields,
    varyValues: r.varyValues,
    lifetime: freshnessLifetime(r),
    initialAge: initialAge(r),
    responseTime: r.responseTime,
    directives: r.directives,
    etag: fieldValue(headers, 'etag'),
    lastModified: fieldValue(headers, 'last-modified'),
    // A small body is also held as the text its hits are written with (serve.ts).
    size: r.body.length * (r.body.length <= JOINED_BODY_MAX ? 2 : 1) + headerBytes(headers),
  };
}

function headerBytes(headers: RawHeaders): number {
  let n = 0;
  for (const h of headers) n += h.length + 2;
  return n;
}

// §3.2: a 304 replaces the stored fields it carries, except Content-Length and those the stored
// body depends on (it is kept as it was coded).
const KEPT_ON_UPDATE = new Set([
  'content-length',
  'content-encoding',
  'transfer-encoding',
  'content-range',
]);

/**
 * A stored response freshened by a 304 to a validation request (§4.3.4): its fields updated
 * from the 304's, its age and lifetime counted again from this exchange. Undefined when the 304's
 * validator selects another representation (a strong ETag that differs), which must not be updated.
 */
export function freshened(
  entry: StoredResponse,
  notModified: RawHeaders,
  exchange: { readonly requestTime: number; readonly responseTime: number },
  ignored: ReadonlySet<string>,
): StoredResponse | undefined {
  const tag = fieldValue(notModified, 'etag');
  if (tag !== undefined && entry.etag !== undefined && weakTag(tag) !== weakTag(entry.etag))
    return undefined;
  const replaced = new Set<string>();
  const added: RawHeaders = [];
  for (let i = 0; i < notModified.length; i += 2) {
    const lower = notModified[i]!.toLowerCase();
    if (KEPT_ON_UPDATE.has(lower) || isHopByHop(lower, undefined)) continue;
    replaced.add(lower);
    added.push(notModified[i]!, notModified[i + 1]!);
  }
  // A 304 without a Date was generated when it arrived; the stored Date would make it look old.
  if (!replaced.has('date')) {
    replaced.add('date');
    added.push('Date', new Date(exchange.responseTime).toUTCString());
  }
  const headers = [...withoutFields(entry.headers, replaced), ...added];
  return storedResponse({
    primary: entry.primary,
    status: entry.status,
    headers,
    body: entry.body,
    varyFields: entry.varyFields,
    varyValues: entry.varyValues,
    ignored,
    directives: responseDirectives(headers),
    requestTime: exchange.requestTime,
    responseTime: exchange.responseTime,
  });
}

/** An entity tag without its weakness prefix (RFC 9110 §8.8.3.2 weak comparison). */
export function weakTag(tag: string): string {
  const t = tag.trim();
  return t.startsWith('W/') ? t.slice(2) : t;
}
