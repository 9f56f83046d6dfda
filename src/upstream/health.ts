// Passive health checks (REFERENCE §14): failures to connect are counted per backend; a count that
// has seen no new failure for a whole window starts again from zero; a backend whose count is
// above the maximum is not chosen while another is available. The counts are the shared store's,
// so they outlive a reload, and with worker processes a backend one worker finds failing is
// avoided by all.
import type { SharedCounters, SharedStore } from '../store/shared-store.js';
import type { Backend } from './backend.js';

// Backends tracked at once: far more than any configuration names.
const MAX_BACKENDS = 10_000;

export class HealthBook {
  /** The counters per window length (`loadBalancerHealthCheckWindow` may differ by location). */
  private readonly byWindow = new Map<number, SharedCounters>();

  constructor(private readonly store: SharedStore) {}

  /** A failed connection to `backend` (refused, unreachable, TLS handshake…). */
  failed(backend: Backend, windowMs: number): void {
    this.counters(windowMs).add(backend.shown);
  }

  /** Failures counted now (0 once a window has passed without one). */
  failures(backend: Backend, windowMs: number): number {
    return this.counters(windowMs).peek(backend.shown).count;
  }

  private counters(windowMs: number): SharedCounters {
    let counters = this.byWindow.get(windowMs);
    if (counters === undefined) {
      counters = this.store.counters(`upstream-health:${windowMs}`, {
        windowMs,
        maxKeys: MAX_BACKENDS,
      });
      this.byWindow.set(windowMs, counters);
    }
    return counters;
  }
}
