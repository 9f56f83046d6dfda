// enableIPSpoofing: behind a proxy, the client is an address of X-Forwarded-For. The blocklist,
// nonStandardCodes `users`, brute-force keys and the access log all see that address. Without
// `trustedProxies` any client may name itself, as in Ferron (REFERENCE-behaviour.md §12: the first
// address); with it, the header is read only from those peers and the client is the rightmost
// address that is not one of them (nginx's real_ip_recursive), so a forged first entry is never
// believed. Run once per request by the request handler, before the blocklist, with the settings
// of the location the request is for.
import { isIP } from 'node:net';
import type { Ctx } from '../http/ctx.js';
import { HttpError } from '../http/http-error.js';
import { canonical, type IpList } from '../http/ip-list.js';
import type { Resolved } from '../http/resolved.js';

/**
 * Sets `ctx.clientAddress` from X-Forwarded-For where `resolved` trusts it. A malformed header is
 * returned as its 400 rather than thrown: the connection's address stays the client, which the
 * blocklist then checks before the 400 is sent.
 */
export function applyForwardedFor(ctx: Ctx, resolved: Resolved): HttpError | undefined {
  if (!resolved.settings.enableIPSpoofing) return undefined;
  const trusted = resolved.trustedProxies;
  if (trusted !== undefined && !trusted.has(ctx.clientAddress)) return undefined;
  const header = ctx.req.headers['x-forwarded-for'];
  if (header === undefined) return undefined;
  const value = Array.isArray(header) ? header.join(',') : header;
  const client = trusted === undefined ? firstOf(value) : rightmostUntrusted(value, trusted);
  if (isIP(client) === 0)
    return new HttpError(400, 'bad-forwarded-for', {
      detail: `Invalid X-Forwarded-For address ${JSON.stringify(client.slice(0, 64))}`,
    });
  ctx.clientAddress = canonical(client);
  return undefined;
}

function firstOf(value: string): string {
  const comma = value.indexOf(',');
  return (comma < 0 ? value : value.slice(0, comma)).replace(/[ \t]/g, '');
}

/** From the right, past every trusted proxy; all trusted: the leftmost. An invalid entry stops the walk. */
function rightmostUntrusted(value: string, trusted: IpList): string {
  const entries = value.split(',');
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i]!.replace(/[ \t]/g, '');
    if (i === 0 || isIP(entry) === 0 || !trusted.has(canonical(entry))) return entry;
  }
  return '';
}
