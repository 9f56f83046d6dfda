// Validation (RFC 9111 §4.3): a stored response that needs the origin's word is asked for with its
// validators; in front of the client, or in the background for stale-while-revalidate (RFC 5861).
import type { Ctx } from '../../http/ctx.js';
import { isHttpError } from '../../http/http-error.js';
import type { RawHeaders } from '../../http/respond.js';
import type { ResponseTap } from '../../http/response-tap.js';
import { replacedFields, type OutgoingFields } from '../../http/outgoing-fields.js';
import type { Next } from '../../http/stage.js';
import type { Forwarded } from './cache-status.js';
import { absorbAll } from './capture.js';
import { abandonCopy, detachedCopy } from './detached.js';
import { staleIfError } from './freshness.js';
import { serve, ttl, withTap } from './serve.js';
import type { CachedRequest } from './setup.js';
import { forwardAndStore, storingTap } from './storing-tap.js';
import { freshened, type StoredResponse } from './stored-response.js';
import { variantKey } from './variants.js';

// What a validation request replaces: the stored response's validators go instead of the client's
// own conditions, which the cache evaluates itself against the result (§4.3.1, §4.3.2).
const CLIENT_CONDITIONS = ['if-match', 'if-unmodified-since', 'if-range'] as const;

/** The request fields of a validation request for `entry`, from those of `ctx` (§4.3.1). */
export function validators(ctx: Ctx, entry: StoredResponse): OutgoingFields {
  const fields = new Map<string, string | undefined>();
  fields.set('if-none-match', entry.etag);
  fields.set('if-modified-since', entry.lastModified);
  for (const name of CLIENT_CONDITIONS) fields.set(name, undefined);
  return replacedFields(ctx.outgoing, fields);
}

/** A stored response to validate, and why it goes to the origin (Cache-Status's fwd). */
export interface Validation {
  readonly entry: StoredResponse;
  /** 'stale': the entry is; 'request': the request asked for the origin's word. */
  readonly fwd: Forwarded;
}

/**
 * A stored response that needs the origin's word (§4.3): a 304 freshens and serves it; a full
 * response replaces it; an error or a failure serves it stale where stale-if-error allows.
 */
export async function validate(
  ctx: Ctx,
  next: Next,
  cached: CachedRequest,
  { entry, fwd }: Validation,
): Promise<void> {
  const { setup, caching } = cached;
  if (entry.etag === undefined && entry.lastModified === undefined)
    return forwardAndStore(ctx, next, cached, { parts: { fwd } });
  const requestTime = Date.now();
  let notModified: { headers: RawHeaders; responseTime: number } | undefined;
  let failed: number | undefined;
  const replace = storingTap(ctx, cached, { parts: { fwd }, requestTime, absorb: false });
  const tap: ResponseTap = {
    head(status, headers) {
      if (status === 304) {
        notModified = { headers: headers.slice(), responseTime: Date.now() };
        return absorbAll();
      }
      if (status >= 500 && staleIfError(entry, caching, Date.now())) {
        failed = status;
        return absorbAll();
      }
      void setup.store.remove(entry);
      return replace.head(status, headers);
    },
  };
  const previous = ctx.outgoing;
  ctx.outgoing = validators(ctx, entry);
  try {
    await withTap(ctx, next, tap, { fwd });
  } catch (e) {
    if (!isHttpError(e) || e.status < 500 || ctx.responded) throw e;
    if (!staleIfError(entry, caching, Date.now())) throw e;
    setup.errorLog.log(`[${e.code}] serving a stale response for ${entry.primary}: ${e.message}`);
    failed = e.status;
  } finally {
    ctx.outgoing = previous;
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
    return forwardAndStore(ctx, next, cached, { parts: { fwd } });
  }
  void setup.store.put(updated);
  serve(ctx, updated, now, { fwd, fwdStatus: 304, ttl: ttl(updated, now), stored: true });
}

/**
 * stale-while-revalidate (RFC 5861 §3): the client already has the stale response; a copy of its
 * request, whose response goes nowhere, validates the stored one. One at a time per variant.
 */
export async function revalidateInBackground(
  ctx: Ctx,
  next: Next,
  cached: CachedRequest,
  entry: StoredResponse,
): Promise<void> {
  const setup = cached.setup;
  const key = `revalidate ${variantKey(entry.primary, entry.varyFields, entry.varyValues)}`;
  if (setup.fills.current(key) !== undefined) return;
  const copy = detachedCopy(ctx);
  if (copy === undefined) return;
  const fill = setup.fills.start(key);
  const requestTime = Date.now();
  let notModified: { headers: RawHeaders; responseTime: number } | undefined;
  const replace = storingTap(copy, cached, { parts: {}, requestTime, absorb: true });
  copy.outgoing = validators(ctx, entry);
  copy.tap = {
    head(status, headers) {
      if (status === 304) {
        notModified = { headers: headers.slice(), responseTime: Date.now() };
        return absorbAll();
      }
      if (status >= 500) return absorbAll();
      return replace.head(status, headers);
    },
  };
  // The copy has no client whose `timeout` would reset it: a backend that never answers would
  // hold the validation (and a gateway's process or connection) for ever. Its response closing is
  // what every stage takes for a client gone.
  const limit = setTimeout(() => abandonCopy(copy), setup.backgroundMs).unref();
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
    clearTimeout(limit);
    fill.settle('not-stored');
  }
}
