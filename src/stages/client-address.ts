// enableIPSpoofing: behind a trusted proxy, the client is the first address of X-Forwarded-For.
// The blocklist, nonStandardCodes `users`, brute-force keys and the access log all see that
// address. There is no trusted-proxy list: only enable this behind a proxy that sets the header
// itself (REFERENCE-behaviour.md §12). Run once per request by the request handler, before the
// blocklist, with the settings of the location the request is for.
import { isIP } from 'node:net';
import type { ResolvedSettings } from '../config/defaults.js';
import type { Ctx } from '../http/ctx.js';
import { HttpError } from '../http/http-error.js';
import { canonical } from '../http/ip-list.js';

/**
 * Sets `ctx.clientAddress` from X-Forwarded-For where `settings` trust it. A malformed header is
 * returned as its 400 rather than thrown: the connection's address stays the client, which the
 * blocklist then checks before the 400 is sent.
 */
export function applyForwardedFor(ctx: Ctx, settings: ResolvedSettings): HttpError | undefined {
  if (!settings.enableIPSpoofing) return undefined;
  const header = ctx.req.headers['x-forwarded-for'];
  if (header === undefined) return undefined;
  const value = Array.isArray(header) ? header[0]! : header;
  const comma = value.indexOf(',');
  const first = (comma < 0 ? value : value.slice(0, comma)).replace(/[ \t]/g, '');
  if (isIP(first) === 0)
    return new HttpError(400, 'bad-forwarded-for', {
      detail: `Invalid X-Forwarded-For address ${JSON.stringify(first.slice(0, 64))}`,
    });
  ctx.clientAddress = canonical(first);
  return undefined;
}
