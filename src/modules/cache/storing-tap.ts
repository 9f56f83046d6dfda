// Storing as the response passes (RFC 9111 §3): at the head the tap decides, and says in
// Cache-Status, whether the response can be stored; its body is then kept up to the bound while it
// streams on to the client.
import type { Ctx } from '../../http/ctx.js';
import type { RawHeaders } from '../../http/respond.js';
import type { ResponseTap } from '../../http/response-tap.js';
import type { Next } from '../../http/stage.js';
import { parseCacheControl } from './cache-control.js';
import { CACHE_STATUS, cacheStatus, type CacheStatusParts } from './cache-status.js';
import { Capture } from './capture.js';
import { fieldValue, listMembers } from './fields.js';
import { withTap } from './serve.js';
import type { CacheSetup } from './setup.js';
import { refusal, storedResponse } from './stored-response.js';
import { varyValues } from './variants.js';

/** Sends the request on and stores the response as it passes, if §3 allows. */
export async function forwardAndStore(
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
export function storingTap(
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
export function addVary(headers: RawHeaders, extra: readonly string[]): void {
  if (extra.length === 0) return;
  const present = listMembers(fieldValue(headers, 'vary'));
  const missing = extra.filter((name) => !present.includes(name));
  if (missing.length > 0) headers.push('Vary', missing.join(', '));
}
