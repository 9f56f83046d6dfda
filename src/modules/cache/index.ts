// The HTTP cache (`cache`, REFERENCE §15 with CONTRACT point 12): an RFC 9111 shared cache in
// front of whatever the later stages are, kept in the server's shared store (in memory, or shared
// by the worker processes). One store per server, leased by every Plan with the same
// `maximumCacheEntries`, so a reload that keeps it keeps what was stored.
import { defineModule, type ModuleSettings } from '../../plan/module.js';
import { cacheStage } from './cache-stage.js';
import { checkModuleOrder } from './check.js';
import { Fills } from './fills.js';
import { CACHE_PROPERTIES } from './properties.js';
import type { CacheCounts } from './setup.js';
import { TableStore } from './table-store.js';
import type { SharedStore } from '../../store/shared-store.js';

export interface CacheOptions {
  /** maximumCacheEntries; null: bounded by bytes alone. */
  readonly maxEntries: number | null;
  /** maximumCacheResponseSize; null: bounded by the store's bytes. */
  readonly maxResponseBytes: number | null;
  /** cacheVaryHeaders and cacheIgnoreHeaders, lower-cased. */
  readonly varyHeaders: readonly string[];
  readonly ignored: readonly string[];
  /** How long a background validation may take: `timeout`, or its default when it is off. */
  readonly backgroundMs: number;
}

/**
 * The most the store holds whatever the settings, so that `null` limits (unlimited in Ferron's
 * terms) still leave memory bounded: least recently used entries go first.
 */
export const MAX_STORE_BYTES = 512 * 1024 * 1024;

/** A background validation's limit when `timeout` is off (null): it has no client to reset. */
const DEFAULT_BACKGROUND_MS = 300_000;

function options(s: ModuleSettings<typeof CACHE_PROPERTIES>): CacheOptions {
  return {
    maxEntries: s.maximumCacheEntries,
    maxResponseBytes: s.maximumCacheResponseSize,
    varyHeaders: (s.cacheVaryHeaders ?? []).map((n) => n.toLowerCase()),
    ignored: (s.cacheIgnoreHeaders ?? []).map((n) => n.toLowerCase()),
    backgroundMs: s.timeout ?? DEFAULT_BACKGROUND_MS,
  };
}

class CacheResource {
  readonly fills = new Fills();
  readonly counts: CacheCounts = { hits: 0, misses: 0, stores: 0 };
  readonly store: TableStore;

  constructor(store: SharedStore, maxEntries: number | null) {
    this.store = new TableStore(store, maxEntries ?? undefined, MAX_STORE_BYTES);
  }

  /** The tables go with the last Plan that holds them (in memory), or stay shared (LMDB). */
  close(): void {}
}

export const cache = defineModule({
  name: 'cache',
  properties: CACHE_PROPERTIES,
  check: checkModuleOrder,
  options,
  provision: (o, leases, { errorLog, store }) => {
    const shared = leases.take(
      `cache:store entries=${o.maxEntries ?? 'unbounded'}`,
      () => new CacheResource(store, o.maxEntries),
    );
    return {
      stage: cacheStage({
        store: shared.store,
        fills: shared.fills,
        counts: shared.counts,
        maxResponseBytes: Math.min(o.maxResponseBytes ?? MAX_STORE_BYTES, MAX_STORE_BYTES),
        varyHeaders: o.varyHeaders,
        ignored: new Set(o.ignored),
        backgroundMs: o.backgroundMs,
        errorLog,
      }),
      status: () => ({ ...shared.store.stats(), ...shared.counts }),
    };
  },
});
