// Failed basic-auth logins per client, as Ferron counts them: 10 failures lock the client out, and
// a client's record is forgotten 300 s after its last failure (a sliding window, so the lock-out
// ends by itself 300 s after the 10th failure; refused requests do not extend it). A successful
// login does not clear the record, also as in Ferron: otherwise anyone holding one valid account
// (or sharing a NAT with someone who does) could log in after every 9 guesses and guess forever.
//
// Two differences from Ferron, both about attackers:
// - IPv6 clients are counted per /64, the smallest block a site is usually given; counted per
//   address, one machine could draw a fresh address from its /64 for every guess.
// - Attempts from one client are verified one at a time (`serialize`); otherwise a burst of
//   parallel guesses would all pass the lock-out check before the first failure is counted.
//
// Memory is bounded: at most `maxClients` records, least recently used dropped first, and expired
// ones are removed by `purge` (AuthServices runs it on a timer) rather than only when read. The
// records are the shared store's counters, so with worker processes a lock-out reached through
// one worker holds in all of them.
import ipaddr from 'ipaddr.js';
import { MemoryCounters } from '../store/memory-store.js';
import type { SharedCounters } from '../store/shared-store.js';

export const LOCKOUT_FAILURES = 10;
export const LOCKOUT_WINDOW_MS = 300_000;

export interface BruteForceOptions {
  /** How long after its last failure a client's record lasts (ms); tests shorten it. */
  readonly windowMs?: number;
  readonly maxClients?: number;
  /** The clock, in ms (tests pass a fake one). */
  readonly now?: () => number;
  /** Where failures are counted (the shared store's); made from the options above when absent. */
  readonly counters?: SharedCounters;
}

/** The counter options a guard made from `options` uses, for a shared store to make them. */
export function failureCounting(options: BruteForceOptions = {}) {
  return {
    windowMs: options.windowMs ?? LOCKOUT_WINDOW_MS,
    maxKeys: options.maxClients ?? 100_000,
  };
}

export class BruteForceGuard {
  private readonly failures: SharedCounters;
  /** The last attempt queued per client, while any is in flight. */
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(options: BruteForceOptions = {}) {
    this.failures =
      options.counters ?? new MemoryCounters(failureCounting(options), options.now ?? Date.now);
  }

  isLockedOut(address: string): boolean {
    return this.failures.peek(clientKey(address)).count >= LOCKOUT_FAILURES;
  }

  /** Whole seconds until a locked-out client's record expires (RFC 9110 §10.2.3 Retry-After). */
  secondsLeft(address: string): number {
    return Math.max(1, Math.ceil(this.failures.peek(clientKey(address)).remainingMs / 1000));
  }

  /** Counts a failure and restarts the client's window. */
  recordFailure(address: string): void {
    this.failures.add(clientKey(address));
  }

  /** Runs `attempt` once every earlier attempt from the same client has settled. */
  serialize<T>(address: string, attempt: () => Promise<T>): Promise<T> {
    const key = clientKey(address);
    const previous = this.queues.get(key);
    const result = previous ? previous.then(attempt, attempt) : attempt();
    const settled = result.then(noop, noop);
    this.queues.set(key, settled);
    void settled.then(() => {
      if (this.queues.get(key) === settled) this.queues.delete(key);
    });
    return result;
  }

  /** Frees the records whose window has passed. */
  purge(): void {
    this.failures.purge();
  }

  /** Clients with a live record (for tests and memory checks). */
  get size(): number {
    return this.failures.size;
  }
}

function noop(): void {}

/** IPv4 addresses (IPv4-mapped ones too) as they are; other IPv6 addresses by their /64. */
export function clientKey(address: string): string {
  if (!address.includes(':')) return address;
  try {
    const ip = ipaddr.IPv6.parse(address);
    if (ip.isIPv4MappedAddress()) return ip.toIPv4Address().toString();
    return `${ip.parts
      .slice(0, 4)
      .map((p) => p.toString(16))
      .join(':')}::/64`;
  } catch {
    return address;
  }
}
