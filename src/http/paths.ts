// The URL sanitizer (REFERENCE-behaviour.md §3): one canonical, percent-encoded, ASCII-only path
// per request. Safe escapes are decoded (so `%2e%2e` is `..` and is resolved here, never on disk),
// dot segments are removed without climbing above the root, and NUL or a broken escape is a 400.
// Portico differs from Ferron in two ways: NUL and `%00` are refused rather than dropped, and
// characters outside visible ASCII are percent-encoded rather than kept raw, so every later stage
// (and `{path}` in headers) sees plain ASCII.
import { HttpError } from './http-error.js';

// Bytes an escape is decoded to: letters, digits and ! $ & ' ( ) * + , - . / : ; = @ [ ] _ ~
const SAFE = new Uint8Array(256);
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!$&'()*+,-./:;=@[]_~")
  SAFE[c.charCodeAt(0)] = 1;

/**
 * A path that needs no work: only safe characters (no escape) after a leading `/`, and no `//`,
 * nor a segment ending in `.` (`.`, `..`, `a.`).
 */
function isClean(raw: string): boolean {
  if (raw.charCodeAt(0) !== 47) return false;
  let previous = 47;
  for (let i = 1; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c >= 128 || SAFE[c] === 0) return false;
    if (c === 47 && (previous === 47 || previous === 46)) return false;
    previous = c;
  }
  return previous !== 46;
}
const HEX = '0123456789ABCDEF';

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 65 && c <= 70) return c - 55;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

function badRequest(detail: string): HttpError {
  return new HttpError(400, 'bad-path', { detail: `URL sanitation error: ${detail}` });
}

export function sanitizePath(raw: string, allowDoubleSlashes: boolean): string {
  if (isClean(raw)) return raw;
  let text = '';
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c === 0) throw badRequest('NUL byte in the path');
    if (c === 37) {
      const hi = i + 2 < raw.length ? hexValue(raw.charCodeAt(i + 1)) : -1;
      const lo = i + 2 < raw.length ? hexValue(raw.charCodeAt(i + 2)) : -1;
      if (hi < 0 || lo < 0)
        throw badRequest(`invalid escape ${JSON.stringify(raw.slice(i, i + 3))}`);
      const byte = hi * 16 + lo;
      if (byte === 0) throw badRequest('%00 in the path');
      if (byte === 0xc0 || byte === 0xc1 || byte >= 0xfe)
        throw badRequest(`invalid UTF-8 byte %${raw.slice(i + 1, i + 3)}`);
      text += SAFE[byte] ? String.fromCharCode(byte) : `%${HEX[hi]}${HEX[lo]}`;
      i += 2;
    } else if (c === 92) {
      text += '/'; // a backslash separates segments, as on Windows
    } else if (
      c > 0x20 &&
      c < 0x7f &&
      c !== 34 &&
      c !== 60 &&
      c !== 62 &&
      c !== 94 &&
      c !== 96 &&
      c !== 123 &&
      c !== 124 &&
      c !== 125
    ) {
      text += raw[i];
    } else {
      // Spaces, controls, `"<>^\`{|}` and raw non-ASCII bytes (Node hands them over as latin1).
      text += c > 0xff ? encodeURIComponent(raw[i]!) : `%${HEX[c >> 4]}${HEX[c & 15]}`;
    }
  }
  const trailingSlash = text.endsWith('/');
  const segments = text.split('/');
  const out: string[] = [];
  for (let i = 0; i < segments.length; i++) {
    let s = segments[i]!;
    if (s === '') {
      // The first element is before the leading slash; keep empties only where `//` is allowed.
      if (allowDoubleSlashes && i > 0 && i < segments.length - 1) out.push('');
      continue;
    }
    if (s !== '.' && s !== '..') s = s.replace(/\.+$/, '');
    if (s === '' || s === '.') continue;
    if (s === '..') out.pop();
    else out.push(s);
  }
  if (out.length === 0) return '/';
  return `/${out.join('/')}${trailingSlash ? '/' : ''}`;
}

/** The path as file names: escapes decoded once (invalid UTF-8 is a 400). */
export function decodePath(path: string): string {
  if (!path.includes('%')) return path;
  try {
    return decodeURIComponent(path);
  } catch {
    throw badRequest('the path is not valid UTF-8 once decoded');
  }
}

/** A raw path decoded for the location look-up before it is sanitized: as received when broken. */
export function safeDecode(path: string): string {
  if (!path.includes('%')) return path;
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}
