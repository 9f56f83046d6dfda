// The directives a stored response is judged by. `CDN-Cache-Control` (RFC 9213) is aimed at shared
// caches such as this one: when present and valid it is used instead of `Cache-Control`, which
// then speaks to the caches after this one (browsers). It is a Structured Field dictionary (RFC
// 8941); a field that does not parse, or gives a known directive a value of the wrong type, is
// ignored whole, and `Cache-Control` applies.
import { parseDictionary } from 'structured-headers';
import type { RawHeaders } from '../../http/respond.js';
import { directivesOf, parseCacheControl, type Directives } from './cache-control.js';
import { fieldValue } from './fields.js';

// Directives whose argument is delta-seconds: an Integer; the others are flags (true).
const SECONDS = new Set(['max-age', 's-maxage', 'stale-while-revalidate', 'stale-if-error']);

export function responseDirectives(headers: RawHeaders): Directives {
  const targeted = fieldValue(headers, 'cdn-cache-control');
  return (
    (targeted !== undefined && cdnDirectives(targeted)) ||
    parseCacheControl(fieldValue(headers, 'cache-control'))
  );
}

function cdnDirectives(text: string): Directives | undefined {
  let dictionary: ReturnType<typeof parseDictionary>;
  try {
    dictionary = parseDictionary(text);
  } catch {
    return undefined;
  }
  const args = new Map<string, string | true>();
  for (const [name, member] of dictionary) {
    const value = member[0];
    if (Array.isArray(value)) return undefined;
    if (SECONDS.has(name)) {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) return undefined;
      args.set(name, String(value));
    } else if (value === true) args.set(name, true);
    else if (value !== false) return undefined;
  }
  return directivesOf(args);
}
