// Invalidation (RFC 9111 §4.4): a non-error response to an unsafe request makes the stored
// responses for its URL unusable, and those for the URLs in its Location and Content-Location
// when they are on the same origin (a different host's entries are never touched).
import type { Ctx } from '../../http/ctx.js';
import type { RawHeaders } from '../../http/respond.js';
import { fieldValue } from './fields.js';
import { primaryKey } from './variants.js';

export function invalidationKeys(ctx: Ctx, headers: RawHeaders): string[] {
  const keys = [primaryKey(ctx)];
  const base = `${ctx.scheme}://${ctx.hostHeader ?? ''}`;
  const origin = URL.canParse(base) ? new URL(base) : undefined;
  if (origin === undefined) return keys;
  for (const field of ['location', 'content-location']) {
    const value = fieldValue(headers, field);
    if (value === undefined || !URL.canParse(value, base + ctx.path)) continue;
    const target = new URL(value, base + ctx.path);
    if (target.protocol === origin.protocol && target.host === origin.host)
      keys.push(`${base}${target.pathname}${target.search}`);
  }
  return keys;
}
