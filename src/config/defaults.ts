// The property table's defaults, applied to merged settings once per compiled scope.
import { PROPERTIES, PROPERTY_NAMES, type PropertyRow, type Settings } from './properties.js';
import type { Infer } from './types.js';

type Rows = typeof PROPERTIES;
type Defaulted = { [K in keyof Rows as Rows[K] extends { default: unknown } ? K : never]-?: Infer<Rows[K]['type']> };

/** Settings with every property that has a default present. */
export type ResolvedSettings = Settings & Defaulted;

const DEFAULTS: [string, unknown][] = PROPERTY_NAMES.flatMap((name) => {
  const row: PropertyRow = PROPERTIES[name];
  return row.default === undefined ? [] : [[name, row.default]];
});

export function withDefaults(settings: Settings): ResolvedSettings {
  const out: Record<string, unknown> = { ...settings };
  for (const [name, value] of DEFAULTS) if (out[name] === undefined) out[name] = value;
  return out as ResolvedSettings;
}
