// Fields that describe one connection, not the message (RFC 9110 §7.6.1): they never cross a
// proxy, in either direction, nor do the fields a Connection header lists; HTTP/2 forbids them in
// any message (RFC 9113 §8.2.2), `TE: trailers` excepted.

export const CONNECTION_SPECIFIC: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
]);

const USUAL_CONNECTION = /^(?:keep-alive|close)$/i;

/** The lower-cased names a Connection field lists (undefined when there is none). */
export function connectionListed(
  connection: string | string[] | undefined,
): Set<string> | undefined {
  if (connection === undefined) return undefined;
  // The usual values list nothing that is not hop-by-hop already.
  if (typeof connection === 'string' && USUAL_CONNECTION.test(connection)) return undefined;
  const listed = new Set<string>();
  for (const value of Array.isArray(connection) ? connection : [connection]) {
    for (const token of value.split(',')) {
      const name = token.trim().toLowerCase();
      if (name !== '') listed.add(name);
    }
  }
  return listed;
}

/**
 * `lower` does not cross a proxy: connection-specific, listed by Connection, or `Trailer` (the
 * trailers reach only some clients, and Node refuses to send a head announcing them without a
 * chunked body).
 */
export function isHopByHop(lower: string, listed: ReadonlySet<string> | undefined): boolean {
  return (
    CONNECTION_SPECIFIC.has(lower) ||
    lower === 'trailer' ||
    (listed !== undefined && listed.has(lower))
  );
}

const TRAILERS = /(?:^|,)\s*trailers\s*(?:[;,]|$)/i;

/** A `TE` field lists `trailers`: the sender accepts trailer fields (RFC 9110 §10.1.4). */
export function listsTrailers(te: string | string[] | undefined): boolean {
  return te !== undefined && TRAILERS.test(Array.isArray(te) ? te.join(',') : te);
}
