// An HTTP/2 response head as node:http2's stream.respond() takes it: `:status`, lower-case names
// (RFC 9113 §8.2.1), repeated names (Set-Cookie) as arrays, a `date`, and none of the
// connection-specific fields HTTP/2 forbids.
import { addField } from './http2-single-values.js';
import { allowedInTrailers } from './trailer-fields.js';
import { CONNECTION_SPECIFIC } from './hop-by-hop.js';

/** An HTTP/2 response head: pseudo-field and lower-case names, repeated ones (Set-Cookie) as arrays. */
export type HeaderObject = Record<string, string | string[] | number>;

// Connection-specific fields are malformed in HTTP/2, and Node refuses a head that has one by
// resetting the stream (ERR_HTTP2_INVALID_CONNECTION_HEADERS). Whoever added it (a customHeaders
// entry, a module copying a backend's head), the HTTP/2 response goes without it.
function isConnectionSpecific(lower: string, value: string): boolean {
  // Only names of these lengths (te, upgrade, connection, keep-alive, http2-settings…) can be one.
  const n = lower.length;
  if (n !== 2 && n !== 7 && n !== 10 && n !== 14 && n !== 16 && n !== 17) return false;
  // `TE: trailers` is the one TE allowed.
  return lower === 'te'
    ? value.trim().toLowerCase() !== 'trailers'
    : CONNECTION_SPECIFIC.has(lower);
}

// The names Portico writes map to one lower-case string each, so node:http2 gets the same strings
// every time rather than new ones to lower-case and hash per field (a profile of bench/h2.sh).
const LOWER_NAMES = new Map(
  [
    'Accept-Ranges',
    'Age',
    'Allow',
    'Cache-Control',
    'Content-Encoding',
    'Content-Length',
    'Content-Range',
    'Content-Type',
    'Date',
    'ETag',
    'Last-Modified',
    'Location',
    'Server',
    'Vary',
    'WWW-Authenticate',
  ].map((name) => [name, name.toLowerCase()]),
);

// node:http2 adds a missing `date` to every response head it copies, with a store that misses its
// inline cache on every response once a garbage collection has run before the first one (always
// so in Portico): the costliest single item Portico added to an HTTP/2 hit under callgrind. A head
// with its own `date` skips that store. Formatted once per second.
let dateSecond = -1;
let dateValue = '';

export function currentDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateValue = new Date(second * 1000).toUTCString();
  }
  return dateValue;
}

/** The head for `[name, value, …]`; `date` is added when missing. */
export function headerObject(headers: readonly string[], status: number): HeaderObject {
  const out: HeaderObject = { ':status': status };
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i]!;
    const lower = LOWER_NAMES.get(name) ?? name.toLowerCase();
    const value = headers[i + 1]!;
    if (isConnectionSpecific(lower, value)) continue;
    addField(out, lower, value);
  }
  out.date ??= currentDate();
  return out;
}

/** Trailer fields for node:http2's sendTrailers: lower-case names, none connection-specific. */
export function trailerObject(fields: readonly string[]): HeaderObject {
  const out: HeaderObject = {};
  for (let i = 0; i < fields.length; i += 2) {
    const lower = fields[i]!.toLowerCase();
    const value = fields[i + 1]!;
    if (
      lower.charCodeAt(0) === 58 /* ':' */ ||
      isConnectionSpecific(lower, value) ||
      !allowedInTrailers(lower)
    )
      continue;
    addField(out, lower, value);
  }
  return out;
}

/** A node:http2 head or trailers as [name, value, …], the pseudo-fields left out. */
export function fieldList(
  headers: Readonly<Record<string, string | string[] | number | undefined>>,
): string[] {
  const out: string[] = [];
  for (const name in headers) {
    if (name.charCodeAt(0) === 58 /* ':' */) continue;
    const value = headers[name];
    if (Array.isArray(value)) for (const each of value) out.push(name, each);
    else if (value !== undefined) out.push(name, String(value));
  }
  return out;
}
