// State every process of a server shares, behind one small interface: a feature asks for what it
// needs by name (`counters('brute-force')`, `table('http-cache')`), never for a backend. A single
// process keeps it in memory (memory-store.ts); worker processes count through the primary
// (workers/ipc-store.ts) and keep tables and token buckets in memory-mapped databases
// (lmdb-tables.ts, lmdb-buckets.ts); a networked store for several machines implements the same
// interface.

/** A counter as this process knows it now. */
export interface CounterState {
  readonly count: number;
  /** Until the count is forgotten (0 when there is none). */
  readonly remainingMs: number;
}

/**
 * Counters whose window restarts with each addition: read here and now without waiting (the
 * request path reads them), added to everywhere, each addition seen by every process once it has
 * travelled.
 */
export interface SharedCounters {
  peek(key: string): CounterState;
  /** Counts one for `key` and restarts its window. */
  add(key: string): void;
  /** Forgets what has expired (they are forgotten when read anyway). */
  purge(): void;
  /** Keys with a live count here. */
  readonly size: number;
}

export interface CounterOptions {
  /** How long a key's count lasts after its last addition. */
  readonly windowMs: number;
  /** At most this many keys, the least recently used forgotten first. */
  readonly maxKeys: number;
}

export type Awaitable<T> = T | Promise<T>;

/**
 * Values by key, bounded in entries and bytes: when a bound is passed, the entries stored longest
 * ago (least recently used, in one process) go first. A shared table may answer a write later; a
 * read never waits on the network in the stores there are now, but may in one to come.
 */
export interface SharedTable<T extends {}> {
  get(key: string): Awaitable<T | undefined>;
  has(key: string): Awaitable<boolean>;
  /** `size` counts toward the byte bound; a value larger than the bound is not stored. */
  set(key: string, value: T, size: number): Awaitable<void>;
  delete(key: string): Awaitable<void>;
  stats(): TableStats;
}

export interface TableStats {
  readonly entries: number;
  readonly bytes: number;
  /** Entries this process removed to keep the bounds, since it started. */
  readonly evictions: number;
}

export interface TableOptions {
  /** At most this many entries (undefined: bounded by bytes alone). */
  readonly maxEntries: number | undefined;
  readonly maxBytes: number;
}

/** How a value crosses into a store outside this process: to plain data (msgpack) and back. */
export interface TableCodec<T extends {}> {
  encode(value: T): unknown;
  decode(data: unknown): T;
}

/** A token bucket's rate: a token comes back every `intervalMs`, and a full bucket holds `burst`. */
export interface BucketRate {
  readonly intervalMs: number;
  readonly burst: number;
}

export interface BucketOptions extends BucketRate {
  /**
   * At most this many keys per space: past it, the least recently used (in one process) or the
   * first stored (across processes) is forgotten, its client starting again with a full bucket.
   */
  readonly maxKeys: number;
}

/** What one take answered. */
export interface Taken {
  readonly allowed: boolean;
  /** Tokens left in the bucket after this take. */
  readonly remaining: number;
  /** Until the next token comes back: 0 while one is left. */
  readonly retryAfterMs: number;
}

/**
 * Token buckets by key, counted for the whole server: a take is decided here and now, without
 * waiting (the request path takes), and seen by every process at once. A bucket that has filled
 * up again is forgotten: an absent key is a full bucket.
 */
export interface SharedBuckets {
  /** Takes a token from `key`'s bucket when it has one. */
  take(key: string): Taken;
  /** Keys held now (full buckets not yet forgotten included). */
  readonly size: number;
  /** Forgets every bucket of the space (a reload removed the limit that used it). */
  close(): void | Promise<void>;
}

export interface SharedStore {
  /** The counters of `space`; the same options every time a space is asked for. */
  counters(space: string, options: CounterOptions): SharedCounters;
  /**
   * The table `space`. In memory each call makes a new, empty table (its owner shares it); a
   * shared store gives what every process stored under `space`, with these bounds from now on.
   */
  table<T extends {}>(space: string, options: TableOptions, codec: TableCodec<T>): SharedTable<T>;
  /**
   * The token buckets of `space`. In memory each call makes a new, empty set (its owner shares
   * it); a shared store gives what every process took under `space`.
   */
  buckets(space: string, options: BucketOptions): SharedBuckets;
}
