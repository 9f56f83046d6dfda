// State every process of a server shares, behind one small interface: a feature asks for what it
// needs by name (`counters('brute-force')`), never for a backend. A single process keeps it in
// memory (memory-store.ts); worker processes reach the primary's (workers/ipc-store.ts); a
// networked store for several machines implements the same interface.

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

export interface SharedStore {
  /** The counters of `space`; the same options every time a space is asked for. */
  counters(space: string, options: CounterOptions): SharedCounters;
}
