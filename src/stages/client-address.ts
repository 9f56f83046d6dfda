// enableIPSpoofing: behind a trusted proxy, the client is the first address of X-Forwarded-For.
// Every later stage (blocklist, nonStandardCodes `users`, brute-force keys) and the access log
// see that address. There is no trusted-proxy list: only enable this behind a proxy that sets the
// header itself (REFERENCE-behaviour.md §12).
import { isIP } from 'node:net';
import type { ResolvedSettings } from '../config/defaults.js';
import { HttpError } from '../server/http-error.js';
import { canonical } from '../server/ip-list.js';
import type { Stage } from '../server/stage.js';

export function clientAddress(settings: ResolvedSettings): Stage | undefined {
  if (!settings.enableIPSpoofing) return undefined;
  return (ctx, next) => {
    const header = ctx.req.headers['x-forwarded-for'];
    if (header !== undefined) {
      const value = Array.isArray(header) ? header[0]! : header;
      const comma = value.indexOf(',');
      const first = (comma < 0 ? value : value.slice(0, comma)).replace(/[ \t]/g, '');
      if (isIP(first) === 0) throw new HttpError(400, [], `Invalid X-Forwarded-For address ${JSON.stringify(first.slice(0, 64))}`);
      ctx.clientAddress = canonical(first);
    }
    return next();
  };
}
