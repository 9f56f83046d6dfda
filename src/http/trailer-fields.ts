// Which fields may travel in a trailer section, either way through the proxy (RFC 9110 §6.5.1):
// none that frames the message, routes it, authenticates it, asks for a condition or names the
// client. A client's trailers would otherwise carry `X-Forwarded-For` or `Host` past the head's
// checks to a backend that merges them. gRPC's own (grpc-status, grpc-message, metadata) pass.
const NEVER_IN_TRAILERS: ReadonlySet<string> = new Set([
  'authorization',
  'cache-control',
  'content-encoding',
  'content-length',
  'content-range',
  'content-type',
  'cookie',
  'expect',
  'forwarded',
  'host',
  'if-match',
  'if-modified-since',
  'if-none-match',
  'if-range',
  'if-unmodified-since',
  'max-forwards',
  'pragma',
  'proxy-authenticate',
  'proxy-authorization',
  'range',
  'set-cookie',
  'te',
  'trailer',
  'transfer-encoding',
  'via',
  'www-authenticate',
  'x-real-ip',
]);

/** `lower`: a lower-case field name. */
export function allowedInTrailers(lower: string): boolean {
  return !NEVER_IN_TRAILERS.has(lower) && !lower.startsWith('x-forwarded-');
}
