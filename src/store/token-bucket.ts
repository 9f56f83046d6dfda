// Token-bucket arithmetic as one number per key (GCRA, the generic cell rate algorithm): the time
// at which the bucket will be full again. Each token taken moves it one interval later; the bucket
// is empty when it lies `burst` intervals ahead. One number is cheap to store and to share between
// processes, and a bucket whose time has passed is full, so forgetting it loses nothing.
import type { BucketRate, Taken } from './shared-store.js';

/**
 * Rounding must not refuse a token that has come back: a time near 1.7e12 ms (the epoch's) is
 * held to about 2e-4 ms, and fractional intervals (1000 / 3) add that much per take.
 */
const SLACK_MS = 1e-3;

export interface Take {
  /** When the bucket is full again after this take; unchanged when refused. */
  readonly fullAt: number;
  readonly taken: Taken;
}

/**
 * One take from the bucket that is full at `fullAt` (undefined: full now), at `now` (ms).
 * A clock set back cannot make a bucket owe more than it holds: its debt is capped at `burst`.
 */
export function takeToken(fullAt: number | undefined, now: number, rate: BucketRate): Take {
  const capacity = rate.burst * rate.intervalMs;
  const from = fullAt === undefined || fullAt < now ? now : Math.min(fullAt, now + capacity);
  const next = from + rate.intervalMs;
  const owed = next - now;
  if (owed > capacity + SLACK_MS)
    return {
      fullAt: from,
      taken: { allowed: false, remaining: 0, retryAfterMs: owed - capacity },
    };
  const remaining = Math.floor((capacity - owed + SLACK_MS) / rate.intervalMs);
  return {
    fullAt: next,
    taken: {
      allowed: true,
      remaining,
      retryAfterMs: remaining > 0 ? 0 : next - capacity + rate.intervalMs - now,
    },
  };
}
