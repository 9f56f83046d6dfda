// Where stored responses live. The HTTP rules (cache-stage.ts) only speak to this interface
// (table-store.ts keeps them in the server's shared store, in memory or shared by the worker
// processes); a store may answer asynchronously.
import type { Awaitable, TableStats } from '../../store/shared-store.js';
import type { StoredResponse } from './stored-response.js';

export interface Lookup {
  readonly entry: StoredResponse | undefined;
  /** Something is stored for the URL (a miss is then a vary-miss). */
  readonly known: boolean;
  /** The variant's key when the URL is known, else the URL's: what concurrent misses wait on. */
  readonly key: string;
}

export interface CacheStore {
  /**
   * The variant of `primary` whose varied request fields have the values `valueOf` gives.
   * A store may keep one list of varied fields per URL (the last response stored sets it).
   */
  lookup(primary: string, valueOf: (field: string) => string | undefined): Awaitable<Lookup>;
  /** Stores or replaces the variant `entry` names. */
  put(entry: StoredResponse): Awaitable<void>;
  /** Removes one variant (its replacement was refused, or it cannot be validated). */
  remove(entry: StoredResponse): Awaitable<void>;
  /** Removes every variant of the URL (§4.4). */
  invalidate(primary: string): Awaitable<void>;
  /** For the admin API and the metrics. */
  stats(): TableStats;
}
