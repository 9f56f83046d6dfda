// The cache module's own rows of the property table (config/properties.ts explains the columns).
import { GLOBAL_ONLY, SCOPES, row, type PropertyRows } from '../../config/properties.js';
import { list, nullable, str, u32, u64 } from '../../config/types.js';

export const CACHE_PROPERTIES = {
  maximumCacheEntries: row({
    type: nullable(u32()),
    default: 1024,
    scopes: GLOBAL_ONLY,
    since: '1.0.0',
    summary:
      'Maximum cache entries; the least recently used go first. Null: no limit on the count (the whole cache holds at most 512 MiB).',
    listedAfter: 'timeout',
  }),
  cacheVaryHeaders: row({
    type: list(str('header-name')),
    scopes: SCOPES,
    since: '1.0.0',
    summary: 'Request headers that may vary a cache entry; supplements the `Vary` response header.',
    listedAfter: 'secureProxyTo',
  }),
  cacheIgnoreHeaders: row({
    type: list(str('header-name')),
    scopes: SCOPES,
    since: '1.0.0',
    summary: 'Response headers not stored in the cache.',
  }),
  maximumCacheResponseSize: row({
    type: nullable(u64()),
    default: 2097152,
    scopes: SCOPES,
    since: '1.0.0',
    summary:
      'Largest cached response in bytes; a larger one streams to the client and is not stored. Null: no limit per response (the whole cache holds at most 512 MiB).',
    aliases: ['maximumCachedResponseSize'],
  }),
} as const satisfies PropertyRows;
