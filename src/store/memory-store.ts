// The shared store of a single process, and the primary's for its workers: counters in a bounded
// LRU whose entries expire a window after their last addition, tables in a bounded LRU that
// keeps each value as it was given (nothing to encode when nobody else reads it), and token
// buckets in a bounded LRU of the time each is full again.
import { LRUCache } from 'lru-cache';
import { takeToken } from './token-bucket.js';
import type {
  BucketOptions,
  CounterOptions,
  CounterState,
  SharedBuckets,
  SharedCounters,
  SharedStore,
  SharedTable,
  TableOptions,
  TableStats,
  Taken,
} from './shared-store.js';

/** Least recently used buckets looked at, per new key, to forget those that have filled up. */
const SWEEP = 2;

export class MemoryCounters implements SharedCounters {
  private readonly counts: LRUCache<string, number>;

  constructor(
    readonly options: CounterOptions,
    now: () => number = Date.now,
  ) {
    this.counts = new LRUCache<string, number>({
      max: options.maxKeys,
      ttl: options.windowMs,
      // Read the clock on each call instead of caching it behind a 1 ms timer per request.
      ttlResolution: 0,
      perf: { now },
    });
  }

  peek(key: string): CounterState {
    const count = this.counts.get(key);
    return count === undefined
      ? { count: 0, remainingMs: 0 }
      : { count, remainingMs: this.counts.getRemainingTTL(key) };
  }

  add(key: string): CounterState {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    return { count: this.counts.get(key)!, remainingMs: this.options.windowMs };
  }

  /** Takes a count from where counting is done (the primary), in place of this process's own. */
  set(key: string, state: CounterState): void {
    if (state.remainingMs <= 0) this.counts.delete(key);
    else this.counts.set(key, state.count, { ttl: state.remainingMs });
  }

  purge(): void {
    this.counts.purgeStale();
  }

  get size(): number {
    return this.counts.size;
  }

  /** Every live count, for a process that starts mirroring these counters now. */
  entries(): [string, CounterState][] {
    return [...this.counts.keys()].map((key) => [key, this.peek(key)]);
  }
}

export class MemoryTable<T extends {}> implements SharedTable<T> {
  private readonly values: LRUCache<string, T>;
  private evictions = 0;

  constructor(options: TableOptions) {
    this.values = new LRUCache<string, T>({
      ...(options.maxEntries === undefined ? {} : { max: options.maxEntries }),
      maxSize: options.maxBytes,
      dispose: (_value, _key, reason) => {
        if (reason === 'evict') this.evictions++;
      },
    });
  }

  get(key: string): T | undefined {
    return this.values.get(key);
  }

  has(key: string): boolean {
    return this.values.has(key);
  }

  set(key: string, value: T, size: number): void {
    // lru-cache refuses a value larger than maxSize, and then drops what the key held before.
    this.values.set(key, value, { size: Math.max(1, size) });
  }

  delete(key: string): void {
    this.values.delete(key);
  }

  stats(): TableStats {
    const { size: entries, calculatedSize: bytes } = this.values;
    return { entries, bytes, evictions: this.evictions };
  }
}

export class MemoryBuckets implements SharedBuckets {
  /** Key → when its bucket is full again. */
  private readonly fullAt: LRUCache<string, number>;

  constructor(
    private readonly options: BucketOptions,
    private readonly now: () => number = Date.now,
  ) {
    this.fullAt = new LRUCache<string, number>({ max: options.maxKeys });
  }

  take(key: string): Taken {
    const now = this.now();
    const before = this.fullAt.get(key);
    const { fullAt, taken } = takeToken(before, now, this.options);
    if (taken.allowed) {
      this.fullAt.set(key, fullAt);
      if (before === undefined) this.sweep(now, key);
    }
    return taken;
  }

  get size(): number {
    return this.fullAt.size;
  }

  close(): void {
    this.fullAt.clear();
  }

  /**
   * Forgets the least recently used buckets that are full again, a few per new key, never the
   * new one itself: lru-cache clears its arrays (`maxKeys` long) when its last key is deleted.
   */
  private sweep(now: number, added: string): void {
    const full: string[] = [];
    for (const key of this.fullAt.rkeys()) {
      if (full.length === SWEEP || key === added || this.fullAt.peek(key)! > now) break;
      full.push(key);
    }
    for (const key of full) this.fullAt.delete(key);
  }
}

export class MemoryStore implements SharedStore {
  private readonly made = new Map<string, MemoryCounters>();

  constructor(private readonly now: () => number = Date.now) {}

  counters(space: string, options: CounterOptions): MemoryCounters {
    let counters = this.made.get(space);
    if (counters === undefined)
      this.made.set(space, (counters = new MemoryCounters(options, this.now)));
    return counters;
  }

  table<T extends {}>(_space: string, options: TableOptions): MemoryTable<T> {
    return new MemoryTable<T>(options);
  }

  buckets(_space: string, options: BucketOptions): MemoryBuckets {
    return new MemoryBuckets(options, this.now);
  }

  /** Every space asked for so far, and its counters. */
  get spaces(): ReadonlyMap<string, MemoryCounters> {
    return this.made;
  }
}
