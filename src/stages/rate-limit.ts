// `rateLimit`: a token bucket per key and limit (store/token-bucket.ts), kept in the shared store so
// that a limit holds for the server, worker processes together. The limits of a location, its
// host and the global ones all apply, the innermost first; the first with an empty bucket refuses
// the request, which then takes nothing from those after it. The refusal is a 429 through the
// error path (errorPages, errorConfig) with `Retry-After` and the fields of the IETF draft
// (draft-ietf-httpapi-ratelimit-headers-11): `RateLimit-Policy: "host-0";q=100;w=60` and
// `RateLimit: "host-0";r=0;t=3`. Allowed responses carry neither: the draft lets a server send them
// only when a quota is near exhaustion (§6.2), and a field on every response would cost every
// response its share of the head for what a client learns from its first 429.
import { hash } from 'node:crypto';
import { clientKey } from '../auth/brute-force.js';
import type { ResolvedSettings } from '../config/defaults.js';
import type { Ctx } from '../http/ctx.js';
import { HttpError } from '../http/http-error.js';
import type { Stage } from '../http/stage.js';
import type { BucketOptions, SharedBuckets, Taken } from '../store/shared-store.js';

export type RateLimitEntry = NonNullable<ResolvedSettings['rateLimit']>[number];

/** What a limit is given by the Plan, by the place where it is written. */
export interface LimitPlaces {
  /**
   * The buckets of `limit`, one set for every location its place covers, and the name of its
   * policy in the response fields.
   */
  place(
    limit: RateLimitEntry,
    options: BucketOptions,
  ): { readonly buckets: SharedBuckets; readonly policy: string };
}

/** A path longer than this is kept as its digest: a key's size is bounded. */
const MAX_PATH_KEY = 256;

const PERIOD_SECONDS = { '1s': 1, '1m': 60, '1h': 3600 } as const;

interface Limit {
  readonly buckets: SharedBuckets;
  readonly keyOf: (ctx: Ctx) => string;
  /** The policy's name as a structured-field string. */
  readonly name: string;
  readonly policy: string;
}

export function rateLimit(settings: ResolvedSettings, places: LimitPlaces): Stage | undefined {
  const entries = settings.rateLimit ?? [];
  if (entries.length === 0) return undefined;
  // Merged parent first: the innermost are the last.
  const limits = entries.map((entry) => compile(entry, places)).reverse();
  return (ctx, next) => {
    for (const limit of limits) {
      const taken = limit.buckets.take(limit.keyOf(ctx));
      if (!taken.allowed) throw refusal(limit, taken);
    }
    return next(ctx);
  };
}

/** An entry with the defaults its fields have in the property table (`burst`: a period's worth). */
export function withFieldDefaults(entry: RateLimitEntry): Required<RateLimitEntry> {
  return {
    requests: entry.requests,
    per: entry.per ?? '1s',
    burst: entry.burst ?? entry.requests,
    key: entry.key ?? 'clientIP',
    maxKeys: entry.maxKeys ?? 100_000,
  };
}

function compile(entry: RateLimitEntry, places: LimitPlaces): Limit {
  const limit = withFieldDefaults(entry);
  const seconds = PERIOD_SECONDS[limit.per];
  const options: BucketOptions = {
    intervalMs: (seconds * 1000) / limit.requests,
    burst: limit.burst,
    maxKeys: limit.maxKeys,
  };
  const { buckets, policy } = places.place(entry, options);
  const name = `"${policy}"`;
  return {
    buckets,
    keyOf: keyOf(limit.key),
    name,
    policy: `${name};q=${limit.requests};w=${seconds}`,
  };
}

/**
 * What a bucket is kept for. A header's value is kept as its digest (an API key is a secret, and
 * a value's size is the client's to choose); a request without the header is counted by its
 * client address, so leaving it out does not escape the limit. The kinds cannot meet: an address
 * holds `.` or `:`, a path starts with `/`, a digest has neither.
 */
function keyOf(key: string): (ctx: Ctx) => string {
  if (key === 'clientIP') return (ctx) => clientKey(ctx.clientAddress);
  if (key === 'uri')
    return (ctx) => (ctx.path.length <= MAX_PATH_KEY ? ctx.path : digest(ctx.path));
  const name = key.slice('header:'.length).toLowerCase();
  return (ctx) => {
    const value = ctx.req.headers[name];
    if (value === undefined) return clientKey(ctx.clientAddress);
    return digest(Array.isArray(value) ? value.join(', ') : value);
  };
}

function digest(text: string): string {
  return hash('sha256', text, 'base64url');
}

function refusal(limit: Limit, taken: Taken): HttpError {
  // Whole seconds, rounded up: a client that waits as long finds a token.
  const seconds = String(Math.max(1, Math.ceil(taken.retryAfterMs / 1000)));
  return new HttpError(429, 'rate-limited', {
    headers: [
      ['Retry-After', seconds],
      ['RateLimit-Policy', limit.policy],
      ['RateLimit', `${limit.name};r=0;t=${seconds}`],
    ],
  });
}
