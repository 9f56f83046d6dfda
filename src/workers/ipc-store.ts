// The shared store of a worker process. Counters are read from a mirror in this process, so the
// request path never waits; each addition is counted here at once and sent to the primary, which
// counts it in its own store and tells every worker the count that results (primary.ts), which
// then replaces the mirror's. Tables and token buckets are no messages: every worker maps them.
import { MemoryCounters } from '../store/memory-store.js';
import type {
  BucketOptions,
  CounterOptions,
  CounterState,
  SharedBuckets,
  SharedCounters,
  SharedStore,
  SharedTable,
  TableCodec,
  TableOptions,
} from '../store/shared-store.js';
import type { FromWorker } from './messages.js';

export class IpcStore implements SharedStore {
  private readonly made = new Map<string, IpcCounters>();

  /** Tables and buckets are not the primary's: every worker maps the same ones (`mapped`). */
  constructor(
    private readonly send: (message: FromWorker) => void,
    private readonly mapped: Pick<SharedStore, 'table' | 'buckets'>,
  ) {}

  table<T extends {}>(space: string, options: TableOptions, codec: TableCodec<T>): SharedTable<T> {
    return this.mapped.table(space, options, codec);
  }

  buckets(space: string, options: BucketOptions): SharedBuckets {
    return this.mapped.buckets(space, options);
  }

  counters(space: string, options: CounterOptions): SharedCounters {
    let counters = this.made.get(space);
    if (counters === undefined)
      this.made.set(space, (counters = new IpcCounters(space, options, this.send)));
    return counters;
  }

  /**
   * Counts the primary made. One may be older than what this process counted since: the larger
   * count stands. A space no feature here has asked for yet is made, so it starts with them.
   */
  take(
    space: string,
    options: CounterOptions,
    entries: readonly (readonly [string, CounterState])[],
  ): void {
    const { mirror } = this.counters(space, options) as IpcCounters;
    for (const [key, state] of entries)
      if (state.count >= mirror.peek(key).count) mirror.set(key, state);
  }
}

class IpcCounters implements SharedCounters {
  readonly mirror: MemoryCounters;

  constructor(
    private readonly space: string,
    private readonly options: CounterOptions,
    private readonly send: (message: FromWorker) => void,
  ) {
    this.mirror = new MemoryCounters(options);
  }

  peek(key: string): CounterState {
    return this.mirror.peek(key);
  }

  add(key: string): void {
    this.mirror.add(key);
    this.send({ type: 'count', space: this.space, key, options: this.options });
  }

  purge(): void {
    this.mirror.purge();
  }

  get size(): number {
    return this.mirror.size;
  }
}
