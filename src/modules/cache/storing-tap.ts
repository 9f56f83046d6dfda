// Storing as the response passes (RFC 9111 §3): at the head the tap decides, and says in
// Cache-Status, whether the response can be stored; its body is then kept up to the bound while it
// streams on to the client.
import type { Ctx } from '../../http/ctx.js';
import type { RawHeaders } from '../../http/respond.js';
import type { ResponseTap } from '../../http/response-tap.js';
import type { Next } from '../../http/stage.js';
import { responseDirectives } from './response-directives.js';
import { CACHE_STATUS, stampCacheStatus, type CacheStatusParts } from './cache-status.js';
import { absorbAll, Capture } from './capture.js';
import { fieldValue, listMembers } from './fields.js';
import { withTap } from './serve.js';
import type { FillOutcome } from './fills.js';
import type { CachedRequest } from './setup.js';
import { refusal, storedResponse } from './stored-response.js';
import { CHOSEN_ENCODING, varyValues } from './variants.js';

/** How a response on its way to the client is stored. */
export interface Storing {
  /** What Cache-Status says of the request before the response: how it went forward. */
  readonly parts: CacheStatusParts;
  /** Told once whether the response is stored (other requests may wait on it: fills.ts). */
  readonly settled?: (outcome: FillOutcome | Promise<FillOutcome>) => void;
}

/** Sends the request on and stores the response as it passes, if §3 allows. */
export async function forwardAndStore(
  ctx: Ctx,
  next: Next,
  cached: CachedRequest,
  storing: Storing,
): Promise<void> {
  const requestTime = Date.now();
  await withTap(
    ctx,
    next,
    storingTap(ctx, cached, { ...storing, requestTime, absorb: false }),
    storing.parts,
  );
}

export interface StoringTapOptions extends Storing {
  /** When the request went to the origin (the request_time of RFC 9111 §4.2.3). */
  readonly requestTime: number;
  /** Nobody else is to see the response (a background validation): the tap takes all of it. */
  readonly absorb: boolean;
}

/**
 * The tap that stores: at the head it decides (and says in Cache-Status) whether the response can
 * be stored, then keeps its body up to the bound.
 */
export function storingTap(
  ctx: Ctx,
  { setup, primary }: CachedRequest,
  options: StoringTapOptions,
): ResponseTap {
  const { parts, requestTime, absorb } = options;
  const settled = options.settled ?? (() => undefined);
  return {
    head(status, headers) {
      const responseTime = Date.now();
      addVary(headers, setup.varyHeaders);
      const directives = responseDirectives(headers);
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
        stampCacheStatus(ctx, {
          ...parts,
          fwdStatus: status,
          stored: why === undefined,
          detail: why,
        }),
      );
      if (why !== undefined) {
        settled('not-stored');
        return absorb ? absorbAll() : undefined;
      }
      const keyedByChoice = ctx.coder?.keyedByChoice === true;
      const varyFields = [...new Set(listMembers(fieldValue(received, 'vary')))]
        .map((f) => (f === 'accept-encoding' && keyedByChoice ? CHOSEN_ENCODING : f))
        .sort();
      const varyAt = varyValues(ctx, varyFields);
      return new Capture({
        absorb,
        limit: setup.maxResponseBytes,
        onEnd: (body) => {
          setup.counts.stores++;
          const stored = setup.store.put(
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
          // Requests waiting on this fill look it up once it is there to find.
          settled(
            Promise.resolve(stored).then(
              () => 'stored' as const,
              () => 'not-stored' as const,
            ),
          );
        },
        onGiveUp: () => settled('not-stored'),
      });
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
