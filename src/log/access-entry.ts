// What the access log knows of one request, whatever format writes it.

export interface AccessLogEntry {
  /** As the server knows it; an IPv4-mapped IPv6 address is logged as plain IPv4. */
  clientIp: string;
  /** Basic-auth user, or undefined (or empty) → "-". */
  user: string | undefined;
  /** Request start. */
  time: Date;
  method: string;
  /** Raw request target as received, path?query. */
  target: string;
  /** "HTTP/1.1", "HTTP/2.0". */
  protocol: string;
  /**
   * For a request the HTTP parser refused: what the client sent as its first line, logged in
   * place of method, target and protocol (nginx logs the line it could not parse).
   */
  rawLine?: string;
  status: number;
  /** Body bytes sent (nginx's $body_bytes_sent): 0 for HEAD, what got out of a cut transfer. */
  length: number | undefined;
  referer: string | undefined;
  userAgent: string | undefined;
  // What only the formats whose `extended` is true read; the others are spared finding it out.
  /** The host name the request was for (no port), when it named a valid one. */
  host?: string | undefined;
  /** From the request's start to its response's end. */
  durationMs?: number;
  /** From the request sent to a backend (proxy, gateway) to the head of its response. */
  upstreamMs?: number | undefined;
  /** The TLS version of the connection (`TLSv1.3`); undefined over plain HTTP. */
  tlsVersion?: string | undefined;
  /** What the cache did (`HIT`, `MISS`…); undefined when the response did not pass through it. */
  cacheStatus?: string | undefined;
}
