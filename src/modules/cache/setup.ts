// What the cache stage and its parts share: the store, the fills under way, and the settings of
// one Resolved.
import type { Logger } from '../../http/logger.js';
import type { Fills } from './fills.js';
import type { CacheStore } from './store.js';

export interface CacheSetup {
  readonly store: CacheStore;
  readonly fills: Fills;
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
