// The cache's store over two tables of the server's shared store: stored responses by variant key,
// and an index from each URL to the request fields its variants vary on. In one process both are
// LRU maps of live objects; with workers, every process reads and writes the same tables
// (store/lmdb-tables.ts), so a response stored by one is a hit in all.
//
// Processes write without a lock between them, so the index is the authority: each index entry
// has an epoch, each response is filed under the epoch of the index it joined, and a response
// whose epoch is not the index's current one is never served. Invalidating a URL drops its index
// entry, so whatever a concurrent write left behind can never be found again.
import type {
  Awaitable,
  SharedStore,
  SharedTable,
  TableCodec,
  TableStats,
} from '../../store/shared-store.js';
import { responseDirectives } from './response-directives.js';
import type { CacheStore, Lookup } from './store.js';
import type { StoredResponse } from './stored-response.js';
import { variantKey } from './variants.js';

interface Variants {
  readonly epoch: number;
  readonly fields: readonly string[];
  /** The variants filed so far, for removing them with the URL. */
  readonly keys: readonly string[];
}

interface Filed {
  readonly epoch: number;
  readonly response: StoredResponse;
}

export class TableStore implements CacheStore {
  private readonly responses: SharedTable<Filed>;
  private readonly index: SharedTable<Variants>;

  /** `maxEntries` undefined: bounded by `maxBytes` alone. */
  constructor(store: SharedStore, maxEntries: number | undefined, maxBytes: number) {
    const bounds = { maxEntries, maxBytes };
    this.responses = store.table('http-cache', bounds, FILED_CODEC);
    this.index = store.table('http-cache-urls', bounds, plainCodec<Variants>());
  }

  lookup(primary: string, valueOf: (field: string) => string | undefined): Awaitable<Lookup> {
    return after(this.index.get(primary), (variants) => {
      if (variants === undefined) return { entry: undefined, known: false, key: primary };
      const key = variantKey(primary, variants.fields, variants.fields.map(valueOf));
      return after(this.responses.get(key), (filed) => {
        if (filed?.epoch === variants.epoch) return { entry: filed.response, known: true, key };
        // Every variant evicted: the URL is as unknown as it was before anything was stored.
        return after(this.stored(variants.keys), (kept) =>
          kept.length > 0
            ? { entry: undefined, known: true, key }
            : { entry: undefined, known: false, key: primary },
        );
      });
    });
  }

  /** Done before it returns when the tables answer at once, as invalidate. */
  put(response: StoredResponse): Awaitable<void> {
    const key = variantKey(response.primary, response.varyFields, response.varyValues);
    return after(this.index.get(response.primary), (known) => {
      // The last response stored decides what the URL varies on; variants keyed otherwise could
      // never be found again.
      const same = known !== undefined && sameFields(known.fields, response.varyFields);
      const dropped = known !== undefined && !same ? this.dropVariants(known) : undefined;
      return after(dropped, () => {
        const epoch = same ? known.epoch : Math.floor(Math.random() * 2 ** 52);
        const others = same ? known.keys.filter((k) => k !== key) : [];
        return after(this.stored(others), (kept) => {
          const variants: Variants = { epoch, fields: response.varyFields, keys: [...kept, key] };
          return after(this.responses.set(key, { epoch, response }, response.size), () =>
            this.index.set(response.primary, variants, indexSize(variants)),
          );
        });
      });
    });
  }

  remove(response: StoredResponse): Awaitable<void> {
    return this.responses.delete(
      variantKey(response.primary, response.varyFields, response.varyValues),
    );
  }

  /**
   * Done before it returns when the tables answer at once, so the response to the unsafe request
   * goes out after it: the request that follows, whichever process takes it, misses.
   */
  invalidate(primary: string): Awaitable<void> {
    return after(this.index.get(primary), (variants) => {
      if (variants === undefined) return;
      return after(this.index.delete(primary), () => this.dropVariants(variants));
    });
  }

  stats(): TableStats {
    return this.responses.stats();
  }

  /** Those of `keys` still stored. */
  private stored(keys: readonly string[]): Awaitable<string[]> {
    const answers = keys.map((k) => this.responses.has(k));
    const pick = (found: boolean[]) => keys.filter((_, i) => found[i]);
    if (answers.some((a) => a instanceof Promise)) return Promise.all(answers).then(pick);
    return pick(answers as boolean[]);
  }

  private dropVariants(variants: Variants): Awaitable<void> {
    const done = variants.keys.map((key) => this.responses.delete(key));
    if (done.some((d) => d instanceof Promise)) return Promise.all(done).then(() => undefined);
  }
}

/** `f` applied to `value` at once when it is there, after it arrives when it is a promise. */
function after<A, B>(value: Awaitable<A>, f: (a: A) => Awaitable<B>): Awaitable<B> {
  return value instanceof Promise ? value.then(f) : f(value);
}

function sameFields(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((f, i) => f === b[i]);
}

/** An index entry's share of the byte bound: its keys, and a little for the rest. */
function indexSize(v: Variants): number {
  let n = 64;
  for (const key of v.keys) n += key.length;
  return n;
}

/** The index's entries are plain data already. */
function plainCodec<T extends {}>(): TableCodec<T> {
  return { encode: (value) => value, decode: (data) => data as T };
}

/** A stored response as plain data: its directives are parsed again from its Cache-Control. */
const FILED_CODEC: TableCodec<Filed> = {
  encode({ epoch, response }: Filed): unknown {
    const { directives: _parsed, ...plain } = response;
    return { epoch, response: plain };
  },
  decode(data: unknown): Filed {
    const { epoch, response } = data as {
      epoch: number;
      response: Omit<StoredResponse, 'directives'>;
    };
    const directives = responseDirectives(response.headers);
    return { epoch, response: { ...response, directives } };
  },
};
