// Freshness (RFC 9111 §4.2): how long a stored response may be reused, how old it is, and whether
// a request may have it as it is, stale, or only after validation (§4.2.4, §5.2.1, RFC 5861).
import type { RawHeaders } from '../../http/respond.js';
import type { Directives } from './cache-control.js';
import { fieldValue, httpDate } from './fields.js';

/** What freshness is computed from, fixed when the response arrives. */
export interface Arrival {
  readonly status: number;
  readonly headers: RawHeaders;
  readonly directives: Directives;
  /** ms since the epoch: the request was sent, the response head arrived. */
  readonly requestTime: number;
  readonly responseTime: number;
}

// Statuses a cache may give heuristic freshness to (RFC 9110 §15.1, "heuristically cacheable").
const HEURISTIC_STATUSES = new Set([200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]);
// §4.2.2 suggests a tenth of the time since Last-Modified; Portico caps it, as the issue asked, so
// a page untouched for years is not reused for weeks without a word from the origin.
const HEURISTIC_FRACTION = 0.1;
export const HEURISTIC_CAP_SECONDS = 300;

/** s-maxage, max-age or Expires: the origin said how long (§4.2.1). */
export function hasExplicitLifetime(headers: RawHeaders, directives: Directives): boolean {
  return (
    directives.has('s-maxage') ||
    directives.has('max-age') ||
    fieldValue(headers, 'expires') !== undefined
  );
}

/** §4.2.1 in order for a shared cache: s-maxage, max-age, Expires − Date, then §4.2.2's heuristic. */
export function freshnessLifetime(a: Arrival): number {
  const d = a.directives;
  const sMaxAge = d.seconds('s-maxage');
  if (sMaxAge !== undefined) return sMaxAge;
  const maxAge = d.seconds('max-age');
  if (maxAge !== undefined) return maxAge;
  const date = dateOf(a);
  const expiresField = fieldValue(a.headers, 'expires');
  if (expiresField !== undefined) {
    // §5.3: an invalid Expires (such as "0") means already expired.
    const expires = httpDate(expiresField);
    return expires === undefined ? 0 : Math.max(0, (expires - date) / 1000);
  }
  if (!HEURISTIC_STATUSES.has(a.status) && !d.has('public')) return 0;
  const lastModified = httpDate(fieldValue(a.headers, 'last-modified'));
  if (lastModified === undefined || lastModified >= date) return 0;
  return Math.min(((date - lastModified) / 1000) * HEURISTIC_FRACTION, HEURISTIC_CAP_SECONDS);
}

/** The response's Date, else when it arrived (RFC 9110 §6.6.1). */
function dateOf(a: Arrival): number {
  return httpDate(fieldValue(a.headers, 'date')) ?? a.responseTime;
}

/** §4.2.3's corrected_initial_age, in seconds: the age the response already had when it arrived. */
export function initialAge(a: Arrival): number {
  // Of several values (a list, or several lines joined), the first is the one meant (§5.1).
  const first = fieldValue(a.headers, 'age')?.split(',')[0]?.trim();
  const ageValue = first !== undefined && /^[0-9]+$/.test(first) ? Number(first) : 0;
  const apparentAge = Math.max(0, (a.responseTime - dateOf(a)) / 1000);
  const responseDelay = (a.responseTime - a.requestTime) / 1000;
  return Math.max(apparentAge, ageValue + responseDelay);
}

/** What a stored response needs to be judged later. */
export interface Judged {
  readonly lifetime: number;
  readonly initialAge: number;
  readonly responseTime: number;
  readonly directives: Directives;
}

/** §4.2.3's current_age, in seconds. */
export function currentAge(entry: Judged, now: number): number {
  return entry.initialAge + Math.max(0, now - entry.responseTime) / 1000;
}

/**
 * Once stale, a response with must-revalidate, proxy-revalidate or s-maxage (which implies
 * proxy-revalidate for a shared cache, §5.2.2.10) is never served without validation: not for
 * max-stale, stale-while-revalidate or stale-if-error.
 */
function mustRevalidate(d: Directives): boolean {
  return d.has('must-revalidate') || d.has('proxy-revalidate') || d.has('s-maxage');
}

export type Reuse =
  | 'fresh'
  | 'stale-allowed' // the request's max-stale accepts it
  | 'stale-while-revalidate' // served now, validated in the background (RFC 5861 §3)
  | 'validate-stale'
  | 'validate-requested'; // the request's no-cache, max-age or min-fresh asked for the origin

/** Request directives: Cache-Control, else `Pragma: no-cache` (§5.4). */
export interface RequestCaching {
  readonly directives: Directives;
  readonly pragmaNoCache: boolean;
}

/** §4.2.4 and §5.2.1: whether this request may have this stored response, and how. */
export function reuse(entry: Judged, request: RequestCaching, now: number): Reuse {
  const req = request.directives;
  const age = currentAge(entry, now);
  // §5.2.2.4: unqualified no-cache in the response: validate every time.
  if (entry.directives.has('no-cache') && entry.directives.argument('no-cache') === undefined)
    return 'validate-stale';
  if (req.has('no-cache') || request.pragmaNoCache) return 'validate-requested';
  const maxAge = req.seconds('max-age');
  if (maxAge !== undefined && age > maxAge) return 'validate-requested';
  const left = entry.lifetime - age;
  const minFresh = req.seconds('min-fresh');
  if (minFresh !== undefined && left < minFresh) return 'validate-requested';
  if (left > 0) return 'fresh';
  if (mustRevalidate(entry.directives)) return 'validate-stale';
  const staleness = -left;
  if (req.has('max-stale')) {
    const limit = req.seconds('max-stale');
    if (req.argument('max-stale') === undefined || (limit !== undefined && staleness <= limit))
      return 'stale-allowed';
  }
  const swr = entry.directives.seconds('stale-while-revalidate');
  if (swr !== undefined && staleness <= swr) return 'stale-while-revalidate';
  return 'validate-stale';
}

/** RFC 5861 §4: a stale response may stand in for an error, within stale-if-error's seconds. */
export function staleIfError(entry: Judged, request: RequestCaching, now: number): boolean {
  if (mustRevalidate(entry.directives)) return false;
  const staleness = currentAge(entry, now) - entry.lifetime;
  const allowed = Math.max(
    entry.directives.seconds('stale-if-error') ?? -1,
    request.directives.seconds('stale-if-error') ?? -1,
  );
  return allowed >= 0 && staleness <= allowed;
}
