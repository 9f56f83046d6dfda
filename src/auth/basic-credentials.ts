// The `Authorization: Basic` header (RFC 7617), read as Ferron reads it: base64 of UTF-8
// `user:password`, split at the first colon (so a password may contain colons, a name may not).
// One difference: the scheme name is compared case-insensitively (RFC 9110 §11.1, as nginx and
// Caddy do); Ferron wants exactly `Basic`.

export type BasicAuthorization =
  | { readonly kind: 'credentials'; readonly name: string; readonly password: string }
  /** No header, another scheme, bad base64, bad UTF-8, no colon: answered with a plain 401. */
  | { readonly kind: 'missing' }
  /** Bytes outside visible ASCII (tab and space allowed): answered with 400. */
  | { readonly kind: 'invalid' };

const MISSING = { kind: 'missing' } as const;
const INVALID = { kind: 'invalid' } as const;
// Node hands header values over as latin1, one character per byte.
const NOT_VISIBLE_ASCII = /[^\t\x20-\x7e]/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function parseBasicAuthorization(header: string | undefined): BasicAuthorization {
  if (header === undefined) return MISSING;
  if (NOT_VISIBLE_ASCII.test(header)) return INVALID;
  if (header.length < 6 || header.slice(0, 6).toLowerCase() !== 'basic ') return MISSING;
  const encoded = header.slice(6);
  // Node's decoder skips characters it does not know and accepts missing padding; re-encoding
  // the bytes must give the input back, which holds only for canonical, padded base64.
  if (encoded.length % 4 !== 0 || !BASE64.test(encoded)) return MISSING;
  const bytes = Buffer.from(encoded, 'base64');
  if (bytes.toString('base64') !== encoded) return MISSING;
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return MISSING;
  }
  const colon = text.indexOf(':');
  if (colon < 0) return MISSING;
  return { kind: 'credentials', name: text.slice(0, colon), password: text.slice(colon + 1) };
}
