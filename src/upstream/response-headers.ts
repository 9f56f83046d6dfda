// A backend's response head as the client receives it: every field but the hop-by-hop ones, in
// the flat list the response path takes (Set-Cookie and other repeated fields stay repeated).
import type { IncomingHttpHeaders } from 'node:http';
import type { RawHeaders } from '../http/respond.js';
import { connectionListed, isHopByHop } from '../http/hop-by-hop.js';

export function relayedHeaders(headers: IncomingHttpHeaders): RawHeaders {
  const listed = connectionListed(headers.connection);
  const out: RawHeaders = [];
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || isHopByHop(name, listed)) continue;
    if (Array.isArray(value)) for (const v of value) out.push(name, v);
    else out.push(name, value);
  }
  return out;
}
