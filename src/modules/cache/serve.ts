// The cache's side of the response path: a stored response served (with Age, RFC 9111 §5.1, or as
// a 304 to a client's own conditions, §4.3.2), and the later stages run with a tap watching, every
// response and error page marked with Cache-Status (RFC 9211).
import type { Ctx } from '../../http/ctx.js';
import { HttpError, isHttpError } from '../../http/http-error.js';
import { joinedText, send, type RawHeaders } from '../../http/respond.js';
import type { ResponseTap } from '../../http/response-tap.js';
import type { Next } from '../../http/stage.js';
import { CACHE_STATUS, stampCacheStatus, type CacheStatusParts } from './cache-status.js';
import { isNotModified, notModifiedFields } from './client-conditionals.js';
import { currentAge } from './freshness.js';
import type { StoredResponse } from './stored-response.js';

export function ttl(entry: StoredResponse, now: number): number {
  return entry.lifetime - currentAge(entry, now);
}

/** What every hit on a stored response sends alike, made at its first hit. */
interface Served {
  /** Its fields with its body's own Content-Length. */
  readonly fields: RawHeaders;
  /** The body as its HTTP/1.1 responses write it (respond.ts joinedText). */
  readonly text: string | undefined;
}

const served = new WeakMap<StoredResponse, Served>();

function servedOf(entry: StoredResponse): Served {
  let s = served.get(entry);
  if (s === undefined) {
    const fields: RawHeaders = [];
    for (let i = 0; i < entry.headers.length; i += 2) {
      const lower = entry.headers[i]!.toLowerCase();
      if (lower !== 'content-length' && lower !== 'transfer-encoding')
        fields.push(entry.headers[i]!, entry.headers[i + 1]!);
    }
    fields.push('Content-Length', String(entry.body.length));
    served.set(entry, (s = { fields, text: joinedText(entry.body) }));
  }
  return s;
}

/** A stored response to the client: with its Age (§5.1), or a 304 when its conditions hold (§4.3.2). */
export function serve(ctx: Ctx, entry: StoredResponse, now: number, parts: CacheStatusParts): void {
  const age = String(Math.floor(currentAge(entry, now)));
  const status = stampCacheStatus(ctx, parts);
  if (isNotModified(entry, ctx.req.headers))
    return send(ctx, 304, [...notModifiedFields(entry.headers), 'Age', age, CACHE_STATUS, status]);
  const { fields, text } = servedOf(entry);
  const headers = fields.slice();
  headers.push('Age', age, CACHE_STATUS, status);
  send(ctx, entry.status, headers, entry.body, text);
}

/** Runs the stages after this one with `tap` watching; an error page carries Cache-Status too. */
export async function withTap(ctx: Ctx, next: Next, tap: ResponseTap, parts: CacheStatusParts) {
  ctx.tap = tap;
  try {
    await next(ctx);
  } catch (e) {
    throw withCacheStatus(ctx, e, parts);
  } finally {
    ctx.tap = undefined;
  }
}

export function withCacheStatus(ctx: Ctx, e: unknown, parts: CacheStatusParts): unknown {
  if (!isHttpError(e)) return e;
  const status = stampCacheStatus(ctx, { ...parts, fwdStatus: e.status });
  return new HttpError(e.status, e.code, {
    headers: [...e.headers, [CACHE_STATUS, status]],
    ...(e.detail === undefined ? {} : { detail: e.detail }),
  });
}

/** Passes the request on untouched but for the Cache-Status the response gets. */
export function forward(ctx: Ctx, next: Next, parts: CacheStatusParts): Promise<void> {
  return withTap(
    ctx,
    next,
    {
      head(status, headers) {
        headers.push(CACHE_STATUS, stampCacheStatus(ctx, { ...parts, fwdStatus: status }));
        return undefined;
      },
    },
    parts,
  );
}
