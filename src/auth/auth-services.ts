// What basic authentication keeps between requests. One instance lives as long as the server, not
// as long as a configuration: a reload does not lift a client's lock-out nor forget recent logins
// (Ferron keeps this table per configuration, so a reload clears every lock-out).
import type { SharedStore } from '../store/shared-store.js';
import { BruteForceGuard, failureCounting, LOCKOUT_WINDOW_MS } from './brute-force.js';
import { CredentialCache } from './credential-cache.js';

export interface AuthOptions {
  /**
   * How long a client's failures are remembered after its last one (ms). Production always uses
   * Ferron's 300 s; the option exists so tests can watch a lock-out end.
   */
  readonly lockoutWindowMs?: number;
}

export interface AuthServices {
  readonly bruteForce: BruteForceGuard;
  readonly credentials: CredentialCache;
  readonly errorLog: { log(message: string): void };
  /** Stops the timer that frees expired records. */
  close(): void;
}

const PURGE_INTERVAL_MS = 60_000;

/** `store`: where failed logins are counted, shared with the server's other processes. */
export function createAuthServices(
  errorLog: { log(message: string): void },
  options: AuthOptions = {},
  store: SharedStore,
): AuthServices {
  const windowMs = options.lockoutWindowMs ?? LOCKOUT_WINDOW_MS;
  const counters = store.counters('brute-force', failureCounting({ windowMs }));
  const bruteForce = new BruteForceGuard({ windowMs, counters });
  const credentials = new CredentialCache();
  // Expired records would otherwise only go when read again or pushed out by newer ones.
  const timer = setInterval(
    () => {
      bruteForce.purge();
      credentials.purge();
    },
    Math.min(PURGE_INTERVAL_MS, windowMs),
  );
  timer.unref();
  return { bruteForce, credentials, errorLog, close: () => clearInterval(timer) };
}
