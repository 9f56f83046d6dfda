// The cache stage (RFC 9111 for a shared cache, RFC 5861, RFC 9211): a stored response is served
// when fresh or allowed stale, validated with the origin when not, stored as it passes to the
// client on a miss, and invalidated by a successful unsafe request. What the origin is (the proxy,
// a gateway, static files) does not matter: the stages after this one are `next`.
import type { Ctx } from '../../http/ctx.js';
import { HttpError } from '../../http/http-error.js';
import type { Next, Stage } from '../../http/stage.js';
import { parseCacheControl } from './cache-control.js';
import {
  CACHE_STATUS,
  stampCacheStatus,
  type CacheStatusParts,
  type Forwarded,
} from './cache-status.js';
import { reuse, type RequestCaching } from './freshness.js';
import { invalidationKeys } from './invalidation.js';
import { forward, serve, ttl, withTap } from './serve.js';
import type { CachedRequest, CacheSetup } from './setup.js';
import type { Lookup } from './store.js';
import { forwardAndStore } from './storing-tap.js';
import { revalidateInBackground, validate } from './validation.js';
import { primaryKey, varyValue } from './variants.js';

// Methods whose success invalidates what is stored for the URL (§4.4: the unsafe ones).
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

export function cacheStage(setup: CacheSetup): Stage {
  return (ctx, next) => {
    // A switch of protocols is not a response to store; CONNECT has none either.
    if (ctx.upgrade !== undefined || ctx.method === 'CONNECT') return next(ctx);
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return forwardOther(ctx, next, setup);
    const caching = requestCaching(ctx);
    if (caching.directives.has('no-store') || ctx.req.headers.range !== undefined)
      return forward(ctx, next, { fwd: 'bypass' });
    const cached: CachedRequest = { setup, primary: primaryKey(ctx), caching };
    const found = setup.store.lookup(cached.primary, (field) => varyValue(ctx, field));
    if (found instanceof Promise) return found.then((f) => answer(ctx, next, cached, f));
    return answer(ctx, next, cached, found);
  };
}

function requestCaching(ctx: Ctx): RequestCaching {
  const cc = ctx.req.headers['cache-control'];
  return {
    directives: parseCacheControl(cc),
    // §5.4: Pragma counts only when Cache-Control is absent.
    pragmaNoCache:
      cc === undefined && /(?:^|,)\s*no-cache\s*(?:,|$)/i.test(ctx.req.headers.pragma ?? ''),
  };
}

/** A GET or HEAD, once the store has been asked. */
function answer(ctx: Ctx, next: Next, cached: CachedRequest, found: Lookup): Promise<void> | void {
  const now = Date.now();
  const entry = found.entry;
  const onlyIfCached = cached.caching.directives.has('only-if-cached');
  if (entry !== undefined) {
    const decision = reuse(entry, cached.caching, now);
    if (decision === 'fresh' || decision === 'stale-allowed') {
      cached.setup.counts.hits++;
      return serve(ctx, entry, now, { hit: true, ttl: ttl(entry, now) });
    }
    if (decision === 'stale-while-revalidate') {
      cached.setup.counts.hits++;
      serve(ctx, entry, now, { hit: true, ttl: ttl(entry, now), detail: 'stale-while-revalidate' });
      return revalidateInBackground(ctx, next, cached, entry);
    }
    // §5.2.1.7: nothing the client would accept without the origin.
    if (onlyIfCached) throw notCached(ctx);
    return validate(ctx, next, cached, {
      entry,
      fwd: decision === 'validate-stale' ? 'stale' : 'request',
    });
  }
  if (onlyIfCached) throw notCached(ctx);
  return fill(ctx, next, cached, found);
}

function notCached(ctx: Ctx): HttpError {
  return new HttpError(504, 'not-cached', {
    headers: [[CACHE_STATUS, stampCacheStatus(ctx, { detail: 'only-if-cached' })]],
  });
}

/**
 * A miss (`found` has no entry): one request per key goes to the origin, the others wait for it
 * (the "no stampede") and are served what it stored, or go to the origin themselves when
 * nothing was.
 */
async function fill(ctx: Ctx, next: Next, cached: CachedRequest, found: Lookup): Promise<void> {
  const { setup, caching } = cached;
  const fwd: Forwarded =
    caching.directives.has('no-cache') || caching.pragmaNoCache
      ? 'request'
      : found.known
        ? 'vary-miss'
        : 'uri-miss';
  // no-cache asks for the origin's answer: it does not wait for another request's.
  if (fwd !== 'request') {
    const pending = setup.fills.current(found.key);
    if (pending !== undefined) {
      if ((await pending.done) === 'stored') {
        let again = setup.store.lookup(cached.primary, (field) => varyValue(ctx, field));
        if (again instanceof Promise) again = await again;
        const now = Date.now();
        if (again.entry && reuse(again.entry, caching, now) === 'fresh') {
          setup.counts.hits++;
          return serve(ctx, again.entry, now, {
            hit: true,
            ttl: ttl(again.entry, now),
            collapsed: true,
          });
        }
      }
      setup.counts.misses++;
      return forwardAndStore(ctx, next, cached, { parts: { fwd } });
    }
  }
  setup.counts.misses++;
  const fill = setup.fills.start(found.key);
  try {
    await forwardAndStore(ctx, next, cached, { parts: { fwd }, settled: fill.settle });
  } finally {
    fill.settle('not-stored');
  }
}

/** Methods other than GET and HEAD; a successful unsafe one invalidates (§4.4). */
function forwardOther(ctx: Ctx, next: Next, setup: CacheSetup): Promise<void> {
  const parts: CacheStatusParts = { fwd: 'method' };
  if (SAFE.has(ctx.method)) return forward(ctx, next, parts);
  return withTap(
    ctx,
    next,
    {
      head(status, headers) {
        headers.push(CACHE_STATUS, stampCacheStatus(ctx, { ...parts, fwdStatus: status }));
        if (status >= 200 && status < 400)
          for (const key of invalidationKeys(ctx, headers)) void setup.store.invalidate(key);
        return undefined;
      },
    },
    parts,
  );
}
