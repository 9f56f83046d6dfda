// The counts worker processes share (store/shared-store.ts counters): counted here, in the
// primary, and each result told to every worker, whose mirror takes it (ipc-store.ts).
import { MemoryStore } from '../store/memory-store.js';
import type { FromWorker, ToWorker } from './messages.js';

/** Expired counts would otherwise go only when read again or pushed out by newer ones. */
const PURGE_MS = 60_000;

type Count = Extract<FromWorker, { type: 'count' }>;
type Counted = Extract<ToWorker, { type: 'counted' }>;

export class SharedCounts {
  private readonly store = new MemoryStore();
  private readonly purgeTimer = setInterval(() => {
    for (const counters of this.store.spaces.values()) counters.purge();
  }, PURGE_MS).unref();

  /** Counts one, and says what every worker is to be told. */
  add(m: Count): Counted {
    const state = this.store.counters(m.space, m.options).add(m.key);
    return { type: 'counted', space: m.space, options: m.options, entries: [[m.key, state]] };
  }

  /** Every live count, for a worker that starts now. */
  briefing(): Counted[] {
    return [...this.store.spaces].map(([space, counters]) => ({
      type: 'counted',
      space,
      options: counters.options,
      entries: counters.entries(),
    }));
  }

  close(): void {
    clearInterval(this.purgeTimer);
  }
}
