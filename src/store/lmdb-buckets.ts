// Token buckets the worker processes of one server share: one LMDB environment every worker maps,
// where a take is one write transaction (LMDB's write lock makes its read-modify-write atomic
// across processes), so a limit holds for the server and no request waits on a message. Its own
// environment, apart from the tables': a write-mapped one, whose commits are stores into shared
// memory rather than a write(2) per page, and whose lock a cache write never holds.
//
// Each space keeps its keys in the order they were first stored; storing a new key forgets the
// first stored that are full again, and the first stored of all while the space holds more than
// its bound (no read re-orders them: recency would make every take two more writes).
import { setImmediate as nextTurn } from 'node:timers/promises';
import { open, type Database, type RootDatabase } from 'lmdb';
import { takeToken } from './token-bucket.js';
import type { BucketOptions, SharedBuckets, Taken } from './shared-store.js';

/** A row: [full again at: f64][storage order: f64]. */
const ROW = 16;
/** A space's totals: [keys: f64][the last storage-order number given: f64]. */
const TOTALS = 16;
/** Keys first stored looked at, per new key, to forget those that are full again. */
const SWEEP = 2;
/** Rows removed per transaction when a space is closed: other processes' takes wait meanwhile. */
const CLOSE_CHUNK = 1000;
/** A failing environment (full, broken) is told to the log at most this often. */
const LOG_EVERY_MS = 60_000;

/** Past every storage-order number. */
const LAST = Number.MAX_SAFE_INTEGER;

/** When the store fails, the request is let through: the limit is lifted, the site stays up. */
const STORE_FAILED: Taken = { allowed: true, remaining: 0, retryAfterMs: 0 };

export class LmdbBuckets {
  private readonly root: RootDatabase;
  /** `${space id}:${key}` → row. */
  private readonly rows: Database<Buffer, string>;
  /** [space id, storage order] → key. */
  private readonly order: Database<string, [number, number]>;
  /** space id → totals. */
  private readonly totals: Database<Buffer, number>;
  /** space → its id, given once for every process. */
  private readonly ids: Database<number, string>;
  private loggedAt = -Infinity;
  /** The row being written (LMDB copies it). */
  private readonly written = Buffer.alloc(ROW);

  /**
   * Opens (or creates) the environment in `directory`; every process of the server opens the same.
   * `now` is the clock in ms (every process must read the same one: tests pass a fake).
   */
  constructor(
    directory: string,
    private readonly log: (message: string) => void,
    private readonly now: () => number = Date.now,
  ) {
    this.root = open({
      path: directory,
      // Buckets last seconds to hours, and the directory goes with the server.
      noSync: true,
      useWritemap: true,
      // Address space, not memory: the file is sparse, and a space holds its keys' rows only.
      mapSize: 2 * 1024 ** 3,
      maxDbs: 8,
    });
    this.rows = this.root.openDB<Buffer, string>('bucket-rows', { encoding: 'binary' });
    this.order = this.root.openDB<string, [number, number]>('bucket-order', { encoding: 'string' });
    this.totals = this.root.openDB<Buffer, number>('bucket-totals', { encoding: 'binary' });
    this.ids = this.root.openDB<number, string>('bucket-spaces', { encoding: 'json' });
  }

  buckets(space: string, options: BucketOptions): SharedBuckets {
    let id = 0;
    this.write(() => {
      id = this.ids.get(space) ?? this.ids.getCount() + 1;
      this.ids.putSync(space, id);
    });
    return new LmdbSpace(this, id, options);
  }

  close(): Promise<void> {
    return this.root.close();
  }

  /** @internal LmdbSpace.take. */
  take(id: number, key: string, options: BucketOptions): Taken {
    let taken = STORE_FAILED;
    this.write(() => {
      const now = this.now();
      const rowKey = `${id}:${key}`;
      const row = this.rows.getBinaryFast(rowKey);
      const before = row === undefined ? undefined : row.readDoubleLE(0);
      let order = row === undefined ? 0 : row.readDoubleLE(8);
      const take = takeToken(before, now, options);
      taken = take.taken;
      if (!taken.allowed) return;
      if (row === undefined) order = this.store(id, key, now, options.maxKeys);
      this.written.writeDoubleLE(take.fullAt, 0);
      this.written.writeDoubleLE(order, 8);
      this.rows.putSync(rowKey, this.written);
    });
    return taken;
  }

  /** @internal LmdbSpace.size. */
  size(id: number): number {
    return this.totals.getBinary(id)?.readDoubleLE(0) ?? 0;
  }

  /** @internal LmdbSpace.close: removes the space's rows a chunk at a time. */
  async forget(id: number): Promise<void> {
    let more: boolean;
    do {
      more = false;
      this.write(() => {
        const chunk = this.first(id, LAST, CLOSE_CHUNK);
        for (const { key, value } of chunk) {
          this.rows.removeSync(`${id}:${value}`);
          this.order.removeSync(key);
        }
        more = chunk.length === CLOSE_CHUNK;
        if (!more) this.totals.removeSync(id);
      });
      if (more) await nextTurn();
    } while (more);
  }

  /**
   * A new key's place in its space's order; then the first stored keys that are full again are
   * forgotten, and the first stored of all while the space holds more than `maxKeys`. Inside a write.
   */
  private store(id: number, key: string, now: number, maxKeys: number): number {
    const totals = this.totals.getBinary(id);
    let keys = (totals?.readDoubleLE(0) ?? 0) + 1;
    const order = (totals?.readDoubleLE(8) ?? 0) + 1;
    this.order.putSync([id, order], key);
    for (const { key: place, value: first } of this.first(id, order, SWEEP)) {
      const row = this.rows.getBinary(`${id}:${first}`);
      if (row !== undefined && row.readDoubleLE(0) > now && keys <= maxKeys) break;
      this.order.removeSync(place);
      if (row === undefined) continue;
      this.rows.removeSync(`${id}:${first}`);
      keys--;
    }
    const written = Buffer.allocUnsafe(TOTALS);
    written.writeDoubleLE(keys, 0);
    written.writeDoubleLE(order, 8);
    this.totals.putSync(id, written);
    return order;
  }

  /** The first `limit` keys stored in space `id` before storage order `before`, read at once. */
  private first(id: number, before: number, limit: number) {
    return Array.from(this.order.getRange({ start: [id, 0], end: [id, before], limit }));
  }

  /** One synchronous write transaction, committed before it returns; a failure lifts the limit. */
  private write(action: () => void): void {
    try {
      this.root.transactionSync(action);
    } catch (e) {
      const now = Date.now();
      if (now - this.loggedAt < LOG_EVERY_MS) return;
      this.loggedAt = now;
      this.log(`rate-limit buckets: a write failed, requests pass: ${(e as Error).message}`);
    }
  }
}

class LmdbSpace implements SharedBuckets {
  constructor(
    private readonly env: LmdbBuckets,
    private readonly id: number,
    private readonly options: BucketOptions,
  ) {}

  take(key: string): Taken {
    return this.env.take(this.id, key, this.options);
  }

  get size(): number {
    return this.env.size(this.id);
  }

  close(): Promise<void> {
    return this.env.forget(this.id);
  }
}
