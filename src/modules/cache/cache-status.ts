// The Cache-Status field (RFC 9211) each response that passed through the cache carries, in place
// of Ferron's X-Ferron-Cache: `hit` when the origin was not asked, else `fwd=` why it was, with
// what it answered and whether the answer was stored.

export type Forwarded =
  | 'bypass' // the cache was told not to take part (request no-store, a range, an upgrade)
  | 'method' // the method's responses are not reused
  | 'uri-miss' // nothing stored for the URL
  | 'vary-miss' // responses stored for the URL, none for these varied request fields
  | 'miss'
  | 'request' // a stored response was there, the request's directives asked for the origin
  | 'stale'; // a stored response was there, stale: validated or replaced

export interface CacheStatusParts {
  readonly hit?: boolean;
  readonly fwd?: Forwarded;
  readonly fwdStatus?: number;
  /** Seconds of freshness left (negative: stale). */
  readonly ttl?: number;
  readonly stored?: boolean;
  /** Waited for another request's fetch of the same response. */
  readonly collapsed?: boolean;
  /** Why the response was not stored, or how a stale one was used (a token). */
  readonly detail?: string;
}

export const CACHE_STATUS = 'Cache-Status';
const CACHE_NAME = 'Portico';

export function cacheStatus(p: CacheStatusParts): string {
  let out = CACHE_NAME;
  if (p.hit) out += '; hit';
  if (p.fwd) out += `; fwd=${p.fwd}`;
  if (p.fwdStatus !== undefined) out += `; fwd-status=${p.fwdStatus}`;
  // Whole seconds left, rounded down: a response stale by a fraction of a second says -1.
  if (p.ttl !== undefined) out += `; ttl=${Math.floor(p.ttl)}`;
  if (p.stored) out += '; stored';
  if (p.collapsed) out += '; collapsed';
  if (p.detail) out += `; detail=${p.detail}`;
  return out;
}

/**
 * The Cache-Status value for `parts`, the access log of `ctx` told the same in the words of nginx's
 * `$upstream_cache_status`, which log analysers such as GoAccess know.
 */
export function stampCacheStatus(
  ctx: { cacheStatus: string | undefined },
  parts: CacheStatusParts,
): string {
  ctx.cacheStatus = logWord(parts);
  return cacheStatus(parts);
}

function logWord(p: CacheStatusParts): string {
  // A stored response served past its freshness while it is revalidated in the background; or
  // allowed by stale-if-error, or by the request.
  if (p.detail === 'stale-while-revalidate') return 'UPDATING';
  if (p.detail === 'stale-if-error') return 'STALE';
  if (p.hit) return p.ttl !== undefined && p.ttl < 0 ? 'STALE' : 'HIT';
  if (p.fwdStatus === 304 && (p.fwd === 'stale' || p.fwd === 'request')) return 'REVALIDATED';
  if (p.fwd === 'stale') return 'EXPIRED';
  if (p.fwd === 'bypass' || p.fwd === 'method' || p.fwd === 'request') return 'BYPASS';
  return 'MISS';
}
