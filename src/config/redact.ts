// The configuration as `/config` shows it: every sensitive value replaced by "[redacted]", which
// cannot be switched off. What is sensitive comes from the property table (rows and fields marked
// sensitive; of a mapping, the values its spec names, such as an `X-Api-Key` custom header's or
// every environment variable's, the names kept); credentials in any URL are redacted too
// (`http://user:secret@host` → `http://[redacted]@host`).
import type { PropertyTable } from './property-table.js';
import { isSensitiveKey, type Spec } from './types.js';

export const REDACTED = '[redacted]';
// The userinfo runs to the authority's last `@` (a password may hold `@`); the authority ends at
// the first `/`, `?` or `#` after `//`.
const URL_CREDENTIALS = /^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i;

/** One scope's settings (its locations and errorConfig too) as `/config` shows them. */
export function redactScope(
  settings: Record<string, unknown>,
  properties: PropertyTable,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(settings)) {
    const row = properties.row(properties.canonical(key));
    if (key === 'locations' || key === 'errorConfig') {
      out[key] = Array.isArray(value)
        ? value.map((v) => redactScope(v as Record<string, unknown>, properties))
        : value;
    } else if (row?.sensitive) {
      out[key] = REDACTED;
    } else {
      out[key] = row ? redactValue(row.type, value) : redactStrings(value);
    }
  }
  return out;
}

function redactValue(spec: Spec, value: unknown): unknown {
  if (value === null || value === undefined) return value;
  switch (spec.kind) {
    case 'nullable':
      return redactValue(spec.of, value);
    case 'union':
      return redactStrings(value);
    case 'list':
      return Array.isArray(value)
        ? value.map((v) => redactValue(spec.of, v))
        : redactValue(spec.of, value);
    case 'map':
      return Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([k, v]) => [
          k,
          isSensitiveKey(spec, k) ? REDACTED : redactValue(spec.values, v),
        ]),
      );
    case 'object':
      return Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([k, v]) => {
          const field = spec.fields[k];
          return [
            k,
            field?.sensitive ? REDACTED : field ? redactValue(field.spec, v) : redactStrings(v),
          ];
        }),
      );
    default:
      return redactStrings(value);
  }
}

/** A string with the credentials of the URL it holds, if any, redacted. */
export function redactCredentials(text: string): string {
  return text.replace(URL_CREDENTIALS, `$1${REDACTED}@`);
}

/** Credentials in URLs, wherever a string holds one. */
function redactStrings(value: unknown): unknown {
  if (typeof value === 'string') return redactCredentials(value);
  if (Array.isArray(value)) return value.map(redactStrings);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactStrings(v)]));
  return value;
}
