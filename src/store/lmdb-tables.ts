// Tables the worker processes of one server share: one LMDB environment, memory-mapped by every
// process, so a read is a lookup in shared pages with no message to anyone, and what a table holds
// is bounded once for the server. Writes take LMDB's write lock (one writer at a time across
// processes) in short synchronous transactions that also evict. Eviction is by storage order,
// oldest first: recording each read would make every hit a write.
//
// Each row starts with its storage-order number, unique to that write: a process keeps the values
// it decoded last (a few MiB) and reuses one while its row still starts with the same number, so a
// hit on a popular entry decodes nothing.
import { LRUCache } from 'lru-cache';
import { open, type Database, type RootDatabase } from 'lmdb';
import { Packr } from 'msgpackr';
import type { SharedTable, TableCodec, TableOptions, TableStats } from './shared-store.js';

/** The values each process keeps decoded, per table, at most. */
const DECODED_BYTES = 8 * 1024 * 1024;

/** A row: [storage order: f64][size: f64][the value, msgpack]. */
const HEAD = 16;

interface Totals {
  entries: number;
  bytes: number;
  /** The last storage-order number given. */
  last: number;
}

export class LmdbTables {
  private readonly root: RootDatabase;
  // Plain msgpack: shared record structures would be rewritten by every process that writes.
  private readonly packr = new Packr({ useRecords: false, copyBuffers: true });

  /**
   * Opens (or creates) the environment in `directory`; every process of the server opens the same.
   * A write that fails loses only what it was to store, and is told to `log`.
   */
  constructor(
    directory: string,
    private readonly log: (message: string) => void,
  ) {
    this.root = open({
      path: directory,
      // A cache of what the backends can say again: durability buys nothing here.
      noSync: true,
      // Address space, not memory: room for the tables' bytes (the cache's 512 MiB at most) and the
      // copy-on-write pages a write needs beside them.
      mapSize: 2 * 1024 ** 3,
      maxDbs: 64,
    });
  }

  table<T extends {}>(space: string, options: TableOptions, codec: TableCodec<T>): SharedTable<T> {
    return new LmdbTable(this.root, this.packr, space, options, codec, this.log);
  }

  close(): Promise<void> {
    return this.root.close();
  }
}

class LmdbTable<T extends {}> implements SharedTable<T> {
  private readonly rows: Database<Buffer, string>;
  /** Storage order → key. */
  private readonly order: Database<string, number>;
  private readonly totalsDb: Database<Totals, string>;
  /** Rows this process removed to keep the bounds. */
  private evictions = 0;
  /** What this process decoded, by key, with the storage-order number of the row it came from. */
  private readonly decoded: LRUCache<string, { readonly order: number; readonly value: T }>;

  constructor(
    private readonly root: RootDatabase,
    private readonly packr: Packr,
    private readonly space: string,
    private readonly options: TableOptions,
    private readonly codec: TableCodec<T>,
    private readonly log: (message: string) => void,
  ) {
    this.rows = root.openDB<Buffer, string>(`${space}:rows`, { encoding: 'binary' });
    this.order = root.openDB<string, number>(`${space}:order`, { encoding: 'string' });
    this.totalsDb = root.openDB<Totals, string>(`${space}:totals`, { encoding: 'json' });
    this.decoded = new LRUCache({ maxSize: Math.min(DECODED_BYTES, options.maxBytes) });
  }

  get(key: string): T | undefined {
    // A view of a buffer the next read reuses: read from it before anything else.
    const row = this.rows.getBinaryFast(key);
    if (row === undefined) return undefined;
    const order = row.readDoubleLE(0);
    const known = this.decoded.get(key);
    if (known?.order === order) return known.value;
    const value = this.codec.decode(this.packr.unpack(row.subarray(HEAD)));
    this.decoded.set(key, { order, value }, { size: Math.max(1, row.readDoubleLE(8)) });
    return value;
  }

  has(key: string): boolean {
    return this.rows.doesExist(key);
  }

  set(key: string, value: T, size: number): void {
    const data = this.packr.pack(this.codec.encode(value));
    this.write(() => {
      const totals = this.totals();
      this.drop(key, totals);
      if (size <= this.options.maxBytes) {
        const order = ++totals.last;
        const row = Buffer.allocUnsafe(HEAD + data.length);
        row.writeDoubleLE(order, 0);
        row.writeDoubleLE(size, 8);
        data.copy(row, HEAD);
        this.rows.putSync(key, row);
        this.order.putSync(order, key);
        totals.entries++;
        totals.bytes += size;
        this.evict(totals);
      }
      this.totalsDb.putSync('totals', totals);
    });
  }

  delete(key: string): void {
    this.write(() => {
      const totals = this.totals();
      if (this.drop(key, totals)) this.totalsDb.putSync('totals', totals);
    });
  }

  stats(): TableStats {
    const { entries, bytes } = this.totals();
    return { entries, bytes, evictions: this.evictions };
  }

  /**
   * Committed before it returns, so the next request, whichever process it reaches, sees it (a
   * POST's invalidation before the GET that follows it). Without fsync a commit is a few page
   * writes in memory.
   */
  private write(action: () => void): void {
    try {
      this.root.transactionSync(action);
    } catch (e) {
      this.log(`shared table ${this.space}: a write failed: ${(e as Error).message}`);
    }
  }

  private totals(): Totals {
    return { ...(this.totalsDb.get('totals') ?? { entries: 0, bytes: 0, last: 0 }) };
  }

  /** Removes `key`'s row and its place in the order; inside a write. */
  private drop(key: string, totals: Totals): boolean {
    const row = this.rows.getBinary(key);
    if (row === undefined) return false;
    this.rows.removeSync(key);
    this.order.removeSync(row.readDoubleLE(0));
    totals.entries--;
    totals.bytes -= row.readDoubleLE(8);
    return true;
  }

  /** Oldest first, until both bounds hold; inside a write. */
  private evict(totals: Totals): void {
    const max = this.options.maxEntries ?? Infinity;
    while (totals.entries > max || totals.bytes > this.options.maxBytes) {
      let oldest: { key: number; value: string } | undefined;
      for (const first of this.order.getRange({ limit: 1 })) oldest = first;
      if (oldest === undefined) return;
      if (this.drop(oldest.value, totals)) this.evictions++;
      else this.order.removeSync(oldest.key);
    }
  }
}
