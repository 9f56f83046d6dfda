// Passive health checks (REFERENCE §14): failures to connect are counted per backend; a count that
// has seen no new failure for a whole window starts again from zero; a backend whose count is
// above the maximum is not chosen while another is available. One book per server, leased by every
// Plan that proxies, so what it has learned survives a reload.
import type { Backend } from './backend.js';

interface Record {
  failures: number;
  last: number;
}

export class HealthBook {
  private readonly records = new Map<string, Record>();

  /** A failed connection to `backend` (refused, unreachable, TLS handshake…). */
  failed(backend: Backend, windowMs: number): void {
    const t = Date.now();
    const r = this.records.get(backend.shown);
    if (r === undefined || t - r.last > windowMs)
      this.records.set(backend.shown, { failures: 1, last: t });
    else {
      r.failures++;
      r.last = t;
    }
  }

  /** Failures counted now (0 once a window has passed without one). */
  failures(backend: Backend, windowMs: number): number {
    const r = this.records.get(backend.shown);
    if (r === undefined) return 0;
    if (Date.now() - r.last > windowMs) {
      this.records.delete(backend.shown);
      return 0;
    }
    return r.failures;
  }

  close(): void {
    this.records.clear();
  }
}
