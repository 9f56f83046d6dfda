// What the cache stage and its parts share: the store, the fills under way, and the settings of
// one Resolved; and per request, what the request is stored under and what it asks of the cache.
import type { Logger } from '../../http/logger.js';
import type { Fills } from './fills.js';
import type { RequestCaching } from './freshness.js';
import type { CacheStore } from './store.js';

/** What this process's cache did, since it started (for /status and /metrics). */
export interface CacheCounts {
  /** Answered from the store without the origin. */
  hits: number;
  /** Sent to the origin with nothing stored to use. */
  misses: number;
  /** Responses stored. */
  stores: number;
}

export interface CacheSetup {
  readonly store: CacheStore;
  readonly fills: Fills;
  readonly counts: CacheCounts;
  /** maximumCacheResponseSize, in bytes. */
  readonly maxResponseBytes: number;
  /** cacheVaryHeaders, lower-cased: added to every response's Vary. */
  readonly varyHeaders: readonly string[];
  /** cacheIgnoreHeaders, lower-cased: left out of stored copies. */
  readonly ignored: ReadonlySet<string>;
  /** How long a background validation may run before its copy of the request is abandoned. */
  readonly backgroundMs: number;
  readonly errorLog: Logger;
}

/** A GET or HEAD the cache handles, from the lookup to the response stored. */
export interface CachedRequest {
  readonly setup: CacheSetup;
  /** The URL's key in the store (variants.ts primaryKey): every variant is stored under it. */
  readonly primary: string;
  /** What the request's own Cache-Control (or Pragma) accepts from the store. */
  readonly caching: RequestCaching;
}
