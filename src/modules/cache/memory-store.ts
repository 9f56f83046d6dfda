// The in-process store: least-recently-used eviction bounded by `maximumCacheEntries` and by bytes,
// and an index from each URL to its variants and the request fields they vary on (kept in step with
// evictions, so it is bounded too).
import { LRUCache } from 'lru-cache';
import type { CacheStore, Lookup } from './store.js';
import type { StoredResponse } from './stored-response.js';
import { variantKey } from './variants.js';

interface Variants {
  fields: readonly string[];
  readonly keys: Set<string>;
}

export class MemoryStore implements CacheStore {
  private readonly entries: LRUCache<string, StoredResponse>;
  private readonly byUrl = new Map<string, Variants>();

  /** `maxEntries` undefined: bounded by `maxBytes` alone. */
  constructor(maxEntries: number | undefined, maxBytes: number) {
    this.entries = new LRUCache<string, StoredResponse>({
      ...(maxEntries === undefined ? {} : { max: maxEntries }),
      maxSize: maxBytes,
      sizeCalculation: (entry) => Math.max(1, entry.size),
      dispose: (entry, key, reason) => {
        if (reason !== 'set') this.unindex(entry.primary, key);
      },
    });
  }

  lookup(primary: string, valueOf: (field: string) => string | undefined): Lookup {
    const variants = this.byUrl.get(primary);
    if (variants === undefined) return { entry: undefined, known: false, key: primary };
    const key = variantKey(primary, variants.fields, variants.fields.map(valueOf));
    return { entry: this.entries.get(key), known: true, key };
  }

  put(entry: StoredResponse): void {
    let variants = this.byUrl.get(entry.primary);
    // The last response stored decides what the URL varies on; variants keyed otherwise could
    // never be found again.
    if (variants !== undefined && !sameFields(variants.fields, entry.varyFields)) {
      this.invalidate(entry.primary);
      variants = undefined;
    }
    if (variants === undefined) {
      variants = { fields: entry.varyFields, keys: new Set() };
      this.byUrl.set(entry.primary, variants);
    }
    const key = variantKey(entry.primary, entry.varyFields, entry.varyValues);
    variants.keys.add(key);
    this.entries.set(key, entry);
    // Too large for the byte bound: lru-cache refused it; the index must not keep the key.
    if (!this.entries.has(key)) this.unindex(entry.primary, key);
  }

  remove(entry: StoredResponse): void {
    this.entries.delete(variantKey(entry.primary, entry.varyFields, entry.varyValues));
  }

  invalidate(primary: string): void {
    const variants = this.byUrl.get(primary);
    if (variants === undefined) return;
    for (const key of [...variants.keys]) this.entries.delete(key);
    this.byUrl.delete(primary);
  }

  stats(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.entries.calculatedSize };
  }

  close(): void {
    this.entries.clear();
    this.byUrl.clear();
  }

  private unindex(primary: string, key: string): void {
    const variants = this.byUrl.get(primary);
    if (variants === undefined) return;
    variants.keys.delete(key);
    if (variants.keys.size === 0) this.byUrl.delete(primary);
  }
}

function sameFields(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((f, i) => f === b[i]);
}
