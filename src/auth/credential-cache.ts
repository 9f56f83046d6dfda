// Recent successful password checks, so a logged-in client (which sends its credentials with every
// request) pays for one key derivation every few minutes instead of one Argon2 hash per request.
// Only successes are kept: a wrong password never finds an entry and always runs the full KDF, so
// it cannot be answered faster than a right one that was not cached either. Entries are keyed by a
// SHA-256 of user, password and the PHC string (no plain password is stored, and a changed hash in
// a reloaded configuration is simply a different key), last a fixed time from the check that
// made them, and are bounded in number (least recently used dropped first).
import { hash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { verifyPassword } from './password.js';

export interface CredentialCacheOptions {
  readonly maxEntries?: number;
  /** How long a successful check is trusted (ms). */
  readonly ttlMs?: number;
  /** The clock, in ms (tests pass a fake one). */
  readonly now?: () => number;
  /** The password check (tests count the calls). */
  readonly verify?: (phc: string, password: string) => Promise<boolean>;
}

export class CredentialCache {
  private readonly verified: LRUCache<string, true>;
  private readonly check: (phc: string, password: string) => Promise<boolean>;

  constructor(options: CredentialCacheOptions = {}) {
    this.verified = new LRUCache<string, true>({
      max: options.maxEntries ?? 1024,
      ttl: options.ttlMs ?? 300_000,
      ttlResolution: 0,
      perf: { now: options.now ?? Date.now },
    });
    this.check = options.verify ?? verifyPassword;
  }

  /** Whether these credentials verified against `phc` within the time to live. */
  has(name: string, password: string, phc: string): boolean {
    return this.verified.get(cacheKey(name, password, phc)) === true;
  }

  /** Checks the password (the KDF runs off the event loop unless cached) and remembers a success. */
  async verify(name: string, password: string, phc: string): Promise<boolean> {
    const key = cacheKey(name, password, phc);
    if (this.verified.get(key)) return true;
    const ok = await this.check(phc, password);
    if (ok) this.verified.set(key, true);
    return ok;
  }

  /** Frees the entries whose time has passed. */
  purge(): void {
    this.verified.purgeStale();
  }

  get size(): number {
    return this.verified.size;
  }
}

// The lengths up front make the split unambiguous whatever characters the name and password hold.
// (The one-shot `hash` costs a third of a Hash object's setup; this runs on every request.)
function cacheKey(name: string, password: string, phc: string): string {
  return hash('sha256', `${name.length}:${password.length}:${name}${password}${phc}`, 'base64');
}
