// The fields node:http2 takes one value of (its kSingleValueHeaders): given a list for one, it
// throws. A repeated one (a backend's Content-Type twice, a client's User-Agent twice) keeps its
// first value, as Node itself keeps the first of those it receives.
export const SINGLE_VALUE_FIELDS: ReadonlySet<string> = new Set([
  'access-control-allow-credentials',
  'access-control-max-age',
  'access-control-request-method',
  'age',
  'authorization',
  'content-encoding',
  'content-language',
  'content-length',
  'content-location',
  'content-md5',
  'content-range',
  'content-type',
  'date',
  'dnt',
  'etag',
  'expires',
  'from',
  'host',
  'if-match',
  'if-modified-since',
  'if-none-match',
  'if-range',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'proxy-authorization',
  'range',
  'referer',
  'retry-after',
  'tk',
  'upgrade-insecure-requests',
  'user-agent',
  'x-content-type-options',
]);

/** Adds `value` of the lower-case field `name` to a node:http2 header object. */
export function addField(
  out: Record<string, string | string[] | number | undefined>,
  name: string,
  value: string,
): void {
  const existing = out[name];
  if (existing === undefined) out[name] = value;
  else if (SINGLE_VALUE_FIELDS.has(name)) return;
  else out[name] = Array.isArray(existing) ? [...existing, value] : [String(existing), value];
}
