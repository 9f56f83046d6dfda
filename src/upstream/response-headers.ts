// A backend's response head as the client receives it: every field but the hop-by-hop ones, in
// the flat list the response path takes (Set-Cookie and other repeated fields stay repeated).
import type { Ctx } from '../http/ctx.js';
import type { RawHeaders } from '../http/respond.js';
import { connectionListed, isHopByHop } from '../http/hop-by-hop.js';
import { allowedInTrailers } from '../http/trailer-fields.js';
import type { RawFields } from './transport.js';
import { loadUndici } from './undici.js';

/**
 * `raw` is undici's [name, value, …] list as read off the wire. Names come out lower-cased
 * (undici's table of known names, no copy for those), values as their bytes (latin1), so whatever
 * the backend sent reaches the client unchanged.
 */
export function relayedHeaders(raw: RawFields): RawHeaders {
  const nameOf = loadUndici().util.headerNameToString;
  const out: RawHeaders = [];
  let connection: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = nameOf(raw[i]!);
    const value = text(raw[i + 1]!);
    if (name === 'connection')
      connection = connection === undefined ? value : `${connection},${value}`;
    else if (!isHopByHop(name, undefined)) out.push(name, value);
  }
  // Rarely more than `keep-alive`: the fields it lists are taken out afterwards.
  const listed = connectionListed(connection);
  if (listed === undefined) return out;
  return out.filter((_, i) => !listed.has(out[i - (i % 2)]!));
}

function text(value: Buffer | string): string {
  return typeof value === 'string' ? value : value.toString('latin1');
}

/**
 * A backend's 103 Early Hints (RFC 8297), passed on while its response is prepared: the `Link`
 * fields alone, which are what a browser acts on. Not to an HTTP/1.0 client, which has no 1xx,
 * nor once the response has begun.
 */
export function relayEarlyHints(ctx: Ctx, raw: readonly (Buffer | string)[]): void {
  const req = ctx.req;
  if (ctx.responded || (req.httpVersionMajor === 1 && req.httpVersionMinor === 0)) return;
  const nameOf = loadUndici().util.headerNameToString;
  const links: string[] = [];
  for (let i = 0; i < raw.length; i += 2)
    if (nameOf(raw[i]!) === 'link') links.push(text(raw[i + 1]!));
  if (links.length === 0) return;
  const res = ctx.res;
  if ('stream' in res) res.stream.additionalHeaders({ ':status': 103, link: links });
  else res.writeEarlyHints({ link: links });
}

/** Trailer fields as the client receives them: the relayed ones a trailer may carry. */
export function relayedTrailers(raw: RawFields): RawHeaders {
  const all = relayedHeaders(raw);
  const out: RawHeaders = [];
  for (let i = 0; i < all.length; i += 2)
    if (allowedInTrailers(all[i]!)) out.push(all[i]!, all[i + 1]!);
  return out;
}

/** The head has a `Trailer` field: the backend says trailer fields will follow its body. */
export function announcesTrailers(raw: RawFields): boolean {
  const nameOf = loadUndici().util.headerNameToString;
  for (let i = 0; i < raw.length; i += 2) if (nameOf(raw[i]!) === 'trailer') return true;
  return false;
}
