// The property table's defaults, applied to merged settings once per compiled scope.
import { CORE_TABLE, type PropertyTable } from './property-table.js';
import type { CORE_PROPERTIES, PropertyRows, Settings, SettingsOf } from './properties.js';
import type { Infer } from './types.js';

type Defaulted<Rows extends PropertyRows> = {
  [K in keyof Rows as Rows[K] extends { default: unknown } ? K : never]-?: Infer<Rows[K]['type']>;
};

/** Settings of rows with every property that has a default present. */
export type ResolvedOf<Rows extends PropertyRows> = SettingsOf<Rows> & Defaulted<Rows>;

/** The core settings with their defaults; a module reads its own through `ResolvedOf` its rows. */
export type ResolvedSettings = ResolvedOf<typeof CORE_PROPERTIES>;

/** `settings` with the default of every property of the table that it leaves unset. */
export function withDefaults(
  settings: Settings,
  properties: PropertyTable = CORE_TABLE,
): ResolvedSettings {
  const out: Record<string, unknown> = { ...settings };
  for (const [name, value] of properties.defaults) if (out[name] === undefined) out[name] = value;
  for (const [name, defaults] of properties.fieldDefaults) {
    const value = out[name];
    if (value !== undefined && value !== null)
      out[name] = { ...defaults, ...(value as Record<string, unknown>) };
  }
  return out as ResolvedSettings;
}
