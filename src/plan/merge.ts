// CONTRACT.md's merge of global → host → location → errorConfig, done once at compile time:
// scalars replace; a list or an object replaces when its row says so (`replacesParent`: proxyTo
// and secureProxyTo, a location's backends being its own; `respond`, a fixed answer being whole),
// and otherwise a list concatenates, parent first, and a mapping merges key by key, the child's
// keys winning. A row's `replacesAlso` drops the parent's value of those properties too (`allow`
// and `deny`, one rule list as nginx's).
import type { PropertyTable } from '../config/property-table.js';
import type { Settings } from '../config/properties.js';

export function mergeSettings(
  parent: Settings,
  child: Settings,
  properties: PropertyTable,
): Settings {
  const out: Record<string, unknown> = { ...parent };
  for (const [key, value] of Object.entries(child)) {
    const base = out[key];
    if (properties.row(key)?.replacesParent) out[key] = value;
    else if (Array.isArray(value) && Array.isArray(base)) out[key] = [...base, ...value];
    else if (isMapping(value) && isMapping(base)) out[key] = { ...base, ...value };
    else out[key] = value;
  }
  for (const key of Object.keys(child))
    for (const also of properties.row(key)?.replacesAlso ?? [])
      if (!Object.hasOwn(child, also)) delete out[also];
  return out as Settings;
}

function isMapping(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
