// The property table's defaults, applied to merged settings once per compiled scope.
import { PROPERTIES, PROPERTY_NAMES, type PropertyRow, type Settings } from './properties.js';
import type { Infer } from './types.js';

type Rows = typeof PROPERTIES;
type Defaulted = {
  [K in keyof Rows as Rows[K] extends { default: unknown } ? K : never]-?: Infer<Rows[K]['type']>;
};

/** Settings with every property that has a default present. */
export type ResolvedSettings = Settings & Defaulted;

const DEFAULTS: [string, unknown][] = PROPERTY_NAMES.flatMap((name) => {
  const row: PropertyRow = PROPERTIES[name];
  return row.default === undefined ? [] : [[name, row.default]];
});

// Objects that are present get their fields' defaults too (an `admin` block that only sets
// `listen` has the secure-default profile's switches).
const FIELD_DEFAULTS: [string, Record<string, unknown>][] = PROPERTY_NAMES.flatMap((name) => {
  const type = (PROPERTIES[name] as PropertyRow).type;
  if (type.kind !== 'object') return [];
  const fields = Object.entries(type.fields).filter(([, f]) => f.default !== undefined);
  return fields.length === 0
    ? []
    : [[name, Object.fromEntries(fields.map(([field, f]) => [field, f.default]))]];
});

export function withDefaults(settings: Settings): ResolvedSettings {
  const out: Record<string, unknown> = { ...settings };
  for (const [name, value] of DEFAULTS) if (out[name] === undefined) out[name] = value;
  for (const [name, defaults] of FIELD_DEFAULTS) {
    const value = out[name];
    if (value !== undefined && value !== null)
      out[name] = { ...defaults, ...(value as Record<string, unknown>) };
  }
  return out as ResolvedSettings;
}
