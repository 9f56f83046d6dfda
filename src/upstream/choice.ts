// Which backend takes a request (REFERENCE §14): one at random among those not yet tried for it
// and, with passive health checks, not marked bad; when every untried one is bad, one of them
// anyway, so health alone never refuses a request.
import type { Backend } from './backend.js';
import type { HealthBook } from './health.js';

export interface HealthPolicy {
  readonly book: HealthBook;
  readonly maximumFails: number;
  readonly windowMs: number;
}

/** `tried`: the backends already tried for this request (undefined: none yet). */
export function chooseBackend(
  backends: readonly Backend[],
  tried: ReadonlySet<Backend> | undefined,
  health: HealthPolicy | undefined,
): Backend | undefined {
  const none = tried === undefined || tried.size === 0;
  if (backends.length === 1) return none ? backends[0] : undefined;
  const untried = none ? backends : backends.filter((b) => !tried.has(b));
  const healthy = health
    ? untried.filter((b) => health.book.failures(b, health.windowMs) <= health.maximumFails)
    : untried;
  const pool = healthy.length > 0 ? healthy : untried;
  return pool[Math.floor(Math.random() * pool.length)];
}
