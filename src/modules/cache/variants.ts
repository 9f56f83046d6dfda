// Cache keys (RFC 9111 §4.1, §2): the URL as the cache saw it after rewrites, with the scheme and
// the Host the client asked for (Ferron's key uses Host too), so hosts never share entries; then,
// per stored variant, the request fields its Vary names, normalised.
import type { Ctx } from '../../http/ctx.js';
import { negotiateEncoding } from '../../http/encoding-negotiation.js';

/** scheme://host/path?query, with the rewritten path. */
export function primaryKey(ctx: Ctx): string {
  return `${ctx.scheme}://${ctx.hostHeader ?? ''}${ctx.path}${ctx.query}`;
}

/**
 * Accept-Encoding as the key of a response Portico coded behind this cache: the origin was asked
 * for the coding chosen alone (stages/dynamic-compression.ts), so the response depends on that
 * coding, and any number of distinct headers make at most one variant per coding. Not a field
 * name any response can give (it holds a space), so a response another stage made (static files
 * choosing among precompressed copies) keeps the whole header as its key.
 */
export const CHOSEN_ENCODING = 'accept-encoding (chosen)';

/**
 * A request field's value as Vary compares it: all its lines as one list, whitespace around the
 * commas and at the ends removed (§4.1 allows normalising what has identical semantics).
 */
export function varyValue(ctx: Ctx, field: string): string | undefined {
  if (field === CHOSEN_ENCODING)
    return negotiateEncoding(ctx.req.headers['accept-encoding']) ?? 'identity';
  const value = ctx.req.headers[field];
  if (value === undefined) return undefined;
  const joined = Array.isArray(value) ? value.join(',') : value;
  return joined
    .trim()
    .replace(/[ \t]*,[ \t]*/g, ',')
    .replace(/[ \t]+/g, ' ');
}

export function varyValues(ctx: Ctx, fields: readonly string[]): (string | undefined)[] {
  return fields.map((f) => varyValue(ctx, f));
}

/** The key of one variant: the URL's, then each varied field's value (absent ≠ empty). */
export function variantKey(
  primary: string,
  fields: readonly string[],
  values: readonly (string | undefined)[],
): string {
  let key = primary;
  for (let i = 0; i < fields.length; i++)
    key += values[i] === undefined ? `\n${fields[i]}` : `\n${fields[i]}: ${values[i]}`;
  return key;
}
