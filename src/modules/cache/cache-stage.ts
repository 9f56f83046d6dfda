// The cache stage (RFC 9111 for a shared cache, RFC 5861, RFC 9211): a stored response is served
// when fresh or allowed stale, validated with the origin when not, stored as it passes to the
// client on a miss, and invalidated by a successful unsafe request. What the origin is (the proxy,
// a gateway, static files) does not matter: the stages after this one are `next`.
import type { Ctx } from '../../http/ctx.js';
import { HttpError, isHttpError } from '../../http/http-error.js';
import type { Logger } from '../../http/logger.js';
import { send, type RawHeaders } from '../../http/respond.js';
import type { ResponseTap } from '../../http/response-tap.js';
import type { Next, Stage } from '../../http/stage.js';
import { parseCacheControl } from './cache-control.js';
import {
  CACHE_STATUS,
  cacheStatus,
  type CacheStatusParts,
  type Forwarded,
} from './cache-status.js';
import { Capture } from './capture.js';
import { isNotModified, notModifiedFields } from './client-conditionals.js';
import { detachedCopy } from './detached.js';
import { fieldValue, listMembers } from './fields.js';
import type { Fills } from './fills.js';
import { currentAge, reuse, staleIfError, type RequestCaching } from './freshness.js';
import { invalidationKeys } from './invalidation.js';
import type { CacheStore, Lookup } from './store.js';
import { freshened, refusal, storedResponse, type StoredResponse } from './stored-response.js';
import { primaryKey, variantKey, varyValue, varyValues } from './variants.js';

export interface CacheSetup {
  readonly store: CacheStore;
  readonly fills: Fills;
  /** maximumCacheResponseSize, in bytes. */
  readonly maxResponseBytes: number;
  /** cacheVaryHeaders, lower-cased: added to every response's Vary. */
  readonly varyHeaders: readonly string[];
  /** cacheIgnoreHeaders, lower-cased: left out of stored copies. */
  readonly ignored: ReadonlySet<string>;
  readonly errorLog: Logger;
}

// Methods whose success invalidates what is stored for the URL (§4.4: the unsafe ones).
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);
// What a validation request replaces: the stored response's validators go instead of the client's
// own conditions, which the cache evaluates itself against the result (§4.3.1, §4.3.2).
const CLIENT_CONDITIONS = ['if-match', 'if-unmodified-since', 'if-range'] as const;

export function cacheStage(setup: CacheSetup): Stage {
  return (ctx, next) => {
    // A switch of protocols is not a response to store; CONNECT has none either.
    if (ctx.upgrade !== undefined || ctx.method === 'CONNECT') return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return forwardOther(ctx, next, setup);
    const request = requestCaching(ctx);
    if (request.directives.has('no-store') || ctx.req.headers.range !== undefined)
      return forward(ctx, next, { fwd: 'bypass' });
    const primary = primaryKey(ctx);
    const found = setup.store.lookup(primary, (field) => varyValue(ctx, field));
    if (found instanceof Promise)
      return found.then((f) => answer(ctx, next, setup, request, primary, f));
    return answer(ctx, next, setup, request, primary, found);
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
function answer(
  ctx: Ctx,
  next: Next,
  setup: CacheSetup,
  request: RequestCaching,
  primary: string,
  found: Lookup,
): Promise<void> | void {
  const now = Date.now();
  const entry = found.entry;
  const onlyIfCached = request.directives.has('only-if-cached');
  if (entry !== undefined) {
    const decision = reuse(entry, request, now);
    if (decision === 'fresh' || decision === 'stale-allowed')
      return serve(ctx, entry, now, { hit: true, ttl: ttl(entry, now) });
    if (decision === 'stale-while-revalidate') {
      serve(ctx, entry, now, { hit: true, ttl: ttl(entry, now), detail: 'stale-while-revalidate' });
      return revalidateInBackground(ctx, next, setup, entry);
    }
    // §5.2.1.7: nothing the client would accept without the origin.
    if (onlyIfCached) throw notCached();
    return validate(
      ctx,
      next,
      setup,
      request,
      entry,
      decision === 'validate-stale' ? 'stale' : 'request',
    );
  }
  if (onlyIfCached) throw notCached();
  const fwd: Forwarded = found.known ? 'vary-miss' : 'uri-miss';
  const forwarded = request.directives.has('no-cache') || request.pragmaNoCache ? 'request' : fwd;
  return fill(ctx, next, setup, request, primary, found.key, forwarded);
}

function notCached(): HttpError {
  return new HttpError(504, 'not-cached', {
    headers: [[CACHE_STATUS, cacheStatus({ detail: 'only-if-cached' })]],
  });
}

function ttl(entry: StoredResponse, now: number): number {
  return entry.lifetime - currentAge(entry, now);
}

/** A stored response to the client: with its Age (§5.1), or a 304 when its conditions hold (§4.3.2). */
function serve(ctx: Ctx, entry: StoredResponse, now: number, parts: CacheStatusParts): void {
  const age = String(Math.floor(currentAge(entry, now)));
  const status = cacheStatus(parts);
  if (isNotModified(entry, ctx.req.headers))
    return send(ctx, 304, [...notModifiedFields(entry.headers), 'Age', age, CACHE_STATUS, status]);
  const headers: RawHeaders = [];
  for (let i = 0; i < entry.headers.length; i += 2) {
    const lower = entry.headers[i]!.toLowerCase();
    if (lower !== 'content-length' && lower !== 'transfer-encoding')
      headers.push(entry.headers[i]!, entry.headers[i + 1]!);
  }
  headers.push('Content-Length', String(entry.body.length), 'Age', age, CACHE_STATUS, status);
  send(ctx, entry.status, headers, entry.body);
}

/**
 * A miss: one request per key goes to the origin, the others wait for it (the "no
 * stampede") and are served what it stored, or go to the origin themselves when nothing was.
 */
async function fill(
  ctx: Ctx,
  next: Next,
  setup: CacheSetup,
  request: RequestCaching,
  primary: string,
  key: string,
  fwd: Forwarded,
): Promise<void> {
  // no-cache asks for the origin's answer: it does not wait for another request's.
  if (fwd !== 'request') {
    const pending = setup.fills.current(key);
    if (pending !== undefined) {
      if ((await pending.done) === 'stored') {
        let again = setup.store.lookup(primary, (field) => varyValue(ctx, field));
        if (again instanceof Promise) again = await again;
        const now = Date.now();
        if (again.entry && reuse(again.entry, request, now) === 'fresh')
          return serve(ctx, again.entry, now, {
            hit: true,
            ttl: ttl(again.entry, now),
            collapsed: true,
          });
      }
      return forwardAndStore(ctx, next, setup, primary, { fwd });
    }
  }
  const fill = setup.fills.start(key);
  try {
    await forwardAndStore(ctx, next, setup, primary, { fwd }, (stored) =>
      fill.settle(stored ? 'stored' : 'not-stored'),
    );
  } finally {
    fill.settle('not-stored');
  }
}

/** Sends the request on and stores the response as it passes, if §3 allows. */
async function forwardAndStore(
  ctx: Ctx,
  next: Next,
  setup: CacheSetup,
  primary: string,
  parts: CacheStatusParts,
  settled: (stored: boolean) => void = () => undefined,
): Promise<void> {
  const requestTime = Date.now();
  await withTap(
    ctx,
    next,
    storingTap(ctx, setup, primary, requestTime, parts, settled, false),
    parts,
  );
}

/**
 * The tap that stores: at the head it decides (and says in Cache-Status) whether the response can
 * be stored, then keeps its body up to the bound. `absorb`: nobody else is to see it (a background
 * validation).
 */
function storingTap(
  ctx: Ctx,
  setup: CacheSetup,
  primary: string,
  requestTime: number,
  parts: CacheStatusParts,
  settled: (stored: boolean) => void,
  absorb: boolean,
): ResponseTap {
  return {
    head(status, headers) {
      const responseTime = Date.now();
      addVary(headers, setup.varyHeaders);
      const directives = parseCacheControl(fieldValue(headers, 'cache-control'));
      let why =
        ctx.method === 'HEAD'
          ? 'head'
          : refusal(status, headers, directives, {
              authorization: ctx.req.headers.authorization !== undefined,
              ignored: setup.ignored,
            });
      const length = Number(fieldValue(headers, 'content-length') ?? 0);
      if (why === undefined && length > setup.maxResponseBytes) why = 'too-large';
      const received = headers.slice();
      headers.push(
        CACHE_STATUS,
        cacheStatus({ ...parts, fwdStatus: status, stored: why === undefined, detail: why }),
      );
      if (why !== undefined) {
        settled(false);
        return absorb ? new Capture(true, 0, () => undefined) : undefined;
      }
      const varyFields = [...new Set(listMembers(fieldValue(received, 'vary')))].sort();
      const varyAt = varyValues(ctx, varyFields);
      return new Capture(
        absorb,
        setup.maxResponseBytes,
        (body) => {
          void setup.store.put(
            storedResponse({
              primary,
              status,
              headers: received,
              body,
              varyFields,
              varyValues: varyAt,
              ignored: setup.ignored,
              directives,
              requestTime,
              responseTime,
            }),
          );
          settled(true);
        },
        () => settled(false),
      );
    },
  };
}

/** cacheVaryHeaders join the response's Vary (REFERENCE §15), for the client and the store alike. */
function addVary(headers: RawHeaders, extra: readonly string[]): void {
  if (extra.length === 0) return;
  const present = listMembers(fieldValue(headers, 'vary'));
  const missing = extra.filter((name) => !present.includes(name));
  if (missing.length > 0) headers.push('Vary', missing.join(', '));
}

/** Runs the stages after this one with `tap` watching; an error page carries Cache-Status too. */
async function withTap(ctx: Ctx, next: Next, tap: ResponseTap, parts: CacheStatusParts) {
  ctx.tap = tap;
  try {
    await next();
  } catch (e) {
    throw withCacheStatus(e, parts);
  } finally {
    ctx.tap = undefined;
  }
}

function withCacheStatus(e: unknown, parts: CacheStatusParts): unknown {
  if (!isHttpError(e)) return e;
  return new HttpError(e.status, e.code, {
    headers: [...e.headers, [CACHE_STATUS, cacheStatus({ ...parts, fwdStatus: e.status })]],
    ...(e.detail === undefined ? {} : { detail: e.detail }),
  });
}

/** Passes the request on untouched but for the Cache-Status the response gets. */
function forward(ctx: Ctx, next: Next, parts: CacheStatusParts): Promise<void> {
  return withTap(
    ctx,
    next,
    {
      head(status, headers) {
        headers.push(CACHE_STATUS, cacheStatus({ ...parts, fwdStatus: status }));
        return undefined;
      },
    },
    parts,
  );
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
        headers.push(CACHE_STATUS, cacheStatus({ ...parts, fwdStatus: status }));
        if (status >= 200 && status < 400)
          for (const key of invalidationKeys(ctx, headers)) void setup.store.invalidate(key);
        return undefined;
      },
    },
    parts,
  );
}

/** The request fields of a validation request for `entry` (§4.3.1). */
function validators(ctx: Ctx, entry: StoredResponse): Map<string, string | undefined> {
  const fields = new Map(ctx.requestFields);
  fields.set('if-none-match', entry.etag);
  fields.set('if-modified-since', entry.lastModified);
  for (const name of CLIENT_CONDITIONS) fields.set(name, undefined);
  return fields;
}

/**
 * A stored response that needs the origin's word (§4.3): a 304 freshens and serves it; a full
 * response replaces it; an error or a failure serves it stale where stale-if-error allows.
 */
async function validate(
  ctx: Ctx,
  next: Next,
  setup: CacheSetup,
  request: RequestCaching,
  entry: StoredResponse,
  fwd: Forwarded,
): Promise<void> {
  if (entry.etag === undefined && entry.lastModified === undefined)
    return forwardAndStore(ctx, next, setup, entry.primary, { fwd });
  const requestTime = Date.now();
  let notModified: { headers: RawHeaders; responseTime: number } | undefined;
  let failed: number | undefined;
  const replace = storingTap(
    ctx,
    setup,
    entry.primary,
    requestTime,
    { fwd },
    () => undefined,
    false,
  );
  const tap: ResponseTap = {
    head(status, headers) {
      if (status === 304) {
        notModified = { headers: headers.slice(), responseTime: Date.now() };
        return new Capture(true, 0, () => undefined);
      }
      if (status >= 500 && staleIfError(entry, request, Date.now())) {
        failed = status;
        return new Capture(true, 0, () => undefined);
      }
      void setup.store.remove(entry);
      return replace.head(status, headers);
    },
  };
  const previous = ctx.requestFields;
  ctx.requestFields = validators(ctx, entry);
  try {
    await withTap(ctx, next, tap, { fwd });
  } catch (e) {
    if (!isHttpError(e) || e.status < 500 || ctx.responded) throw e;
    if (!staleIfError(entry, request, Date.now())) throw e;
    setup.errorLog.log(`[${e.code}] serving a stale response for ${entry.primary}: ${e.message}`);
    failed = e.status;
  } finally {
    ctx.requestFields = previous;
  }
  const now = Date.now();
  if (failed !== undefined)
    return serve(ctx, entry, now, {
      fwd,
      fwdStatus: failed,
      ttl: ttl(entry, now),
      detail: 'stale-if-error',
    });
  if (notModified === undefined) return;
  const updated = freshened(
    entry,
    notModified.headers,
    { requestTime, responseTime: notModified.responseTime },
    setup.ignored,
  );
  if (updated === undefined) {
    // The 304 names another representation than the one stored: ask for it whole.
    void setup.store.remove(entry);
    return forwardAndStore(ctx, next, setup, entry.primary, { fwd });
  }
  void setup.store.put(updated);
  serve(ctx, updated, now, { fwd, fwdStatus: 304, ttl: ttl(updated, now), stored: true });
}

/**
 * stale-while-revalidate (RFC 5861 §3): the client already has the stale response; a copy of its
 * request, whose response goes nowhere, validates the stored one. One at a time per variant.
 */
async function revalidateInBackground(
  ctx: Ctx,
  next: Next,
  setup: CacheSetup,
  entry: StoredResponse,
): Promise<void> {
  const key = `revalidate ${variantKey(entry.primary, entry.varyFields, entry.varyValues)}`;
  if (setup.fills.current(key) !== undefined) return;
  const copy = detachedCopy(ctx);
  if (copy === undefined) return;
  const fill = setup.fills.start(key);
  const requestTime = Date.now();
  let notModified: { headers: RawHeaders; responseTime: number } | undefined;
  const replace = storingTap(copy, setup, entry.primary, requestTime, {}, () => undefined, true);
  copy.requestFields = validators(ctx, entry);
  copy.tap = {
    head(status, headers) {
      if (status === 304) {
        notModified = { headers: headers.slice(), responseTime: Date.now() };
        return new Capture(true, 0, () => undefined);
      }
      if (status >= 500) return new Capture(true, 0, () => undefined);
      return replace.head(status, headers);
    },
  };
  try {
    await next(copy);
    if (notModified === undefined) return;
    const updated = freshened(
      entry,
      notModified.headers,
      { requestTime, responseTime: notModified.responseTime },
      setup.ignored,
    );
    void (updated === undefined ? setup.store.remove(entry) : setup.store.put(updated));
  } catch (e) {
    const code = isHttpError(e) ? e.code : 'internal';
    setup.errorLog.log(
      `[${code}] background revalidation of ${entry.primary}: ${(e as Error).message}`,
    );
  } finally {
    fill.settle('not-stored');
  }
}
