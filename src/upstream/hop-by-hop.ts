// Hop-by-hop fields (RFC 9110 §7.6.1): they describe one connection and never cross a proxy, in
// either direction, nor do the fields a Connection header lists.

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
  'trailer',
]);

/** The lower-cased names a Connection field lists (undefined when there is none). */
export function connectionListed(
  connection: string | string[] | undefined,
): Set<string> | undefined {
  if (connection === undefined) return undefined;
  const listed = new Set<string>();
  for (const value of Array.isArray(connection) ? connection : [connection]) {
    for (const token of value.split(',')) {
      const name = token.trim().toLowerCase();
      if (name !== '') listed.add(name);
    }
  }
  return listed;
}

/** `lower` is hop-by-hop, by its own name or because Connection lists it. */
export function isHopByHop(lower: string, listed: ReadonlySet<string> | undefined): boolean {
  return HOP_BY_HOP.has(lower) || (listed !== undefined && listed.has(lower));
}
