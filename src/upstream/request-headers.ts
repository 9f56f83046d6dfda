// The request head a backend receives (REFERENCE §14 and §17, CONTRACT points 10 and 11): the
// client's fields less the hop-by-hop ones and HTTP/2 pseudo-fields, `Host` = the backend's
// authority, the length when the client gave one, and `X-Forwarded-*` set here, never taken from
// the client, nor are its `Forwarded` and `X-Real-IP`. `TE: trailers` passes (as Go's proxy lets
// it): the client takes trailer fields, which Portico relays, and a gRPC server requires it.
// `Expect` is answered by Portico itself (Node sends the 100), so it does not travel on.
import type { Ctx } from '../http/ctx.js';
import { connectionListed, isHopByHop, listsTrailers } from '../http/hop-by-hop.js';

const OWN = new Set(['host', 'expect', 'content-length', 'cookie']);

/**
 * Fields a backend reads the client's address, scheme or path prefix from. The client's never
 * travel on, whoever the peer is: X-Forwarded-For carries the address client-address.ts resolved
 * (through trusted proxies too), so a trusted chain still reaches the backend.
 */
function forgeable(lower: string): boolean {
  return lower.startsWith('x-forwarded-') || lower === 'forwarded' || lower === 'x-real-ip';
}

export interface ForwardOptions {
  /** The backend's `host[:port]`. */
  readonly authority: string;
  /** `X-Forwarded-*` are sent (false: `disableProxyXForwarded`, and the client's are dropped too). */
  readonly xForwarded: boolean;
  /**
   * The request to a forwarded-authentication server: it carries no body (so no length), and
   * `X-Forwarded-Method` and `-Uri` name the original request.
   */
  readonly authentication?: boolean;
}

/** A flat [name, value, …] list, the form undici takes as it is. */
export function forwardedHeaders(ctx: Ctx, options: ForwardOptions): string[] {
  const raw = ctx.outgoing.rawHeaders;
  const listed = connectionListed(ctx.req.headers.connection);
  const out: string[] = ['host', options.authority];
  const cookies: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    if (lower.charCodeAt(0) === 58 /* ':' */ || isHopByHop(lower, listed)) {
      if (lower === 'te' && listsTrailers(raw[i + 1])) out.push('te', 'trailers');
      continue;
    }
    if (forgeable(lower)) continue;
    if (OWN.has(lower)) {
      if (lower === 'cookie') cookies.push(raw[i + 1]!);
      continue;
    }
    out.push(name, raw[i + 1]!);
  }
  // HTTP/2 may split Cookie into one field per pair; HTTP/1.1 wants one (RFC 9113 §8.2.3).
  if (cookies.length > 0) out.push('cookie', cookies.join('; '));
  const length = ctx.req.headers['content-length'];
  if (
    !options.authentication &&
    length !== undefined &&
    ctx.req.headers['transfer-encoding'] === undefined
  )
    out.push('content-length', length);
  if (options.xForwarded) {
    out.push('x-forwarded-for', ctx.clientAddress, 'x-forwarded-proto', ctx.scheme);
    if (ctx.hostHeader !== undefined) out.push('x-forwarded-host', ctx.hostHeader);
  }
  if (options.authentication)
    out.push('x-forwarded-method', ctx.method, 'x-forwarded-uri', ctx.path + ctx.query);
  return out;
}
