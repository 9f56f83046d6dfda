// CONTRACT.md's merge of global → host → location → errorConfig, done once at compile time:
// scalars replace; proxyTo and secureProxyTo replace (a location's backends are its own); every
// other list concatenates, parent first; mappings merge key by key, the child's keys winning.
import type { Settings } from '../config/properties.js';

const REPLACING_LISTS = new Set(['proxyTo', 'secureProxyTo']);

export function mergeSettings(parent: Settings, child: Settings): Settings {
  const out: Record<string, unknown> = { ...parent };
  for (const [key, value] of Object.entries(child)) {
    const base = out[key];
    if (Array.isArray(value) && Array.isArray(base) && !REPLACING_LISTS.has(key))
      out[key] = [...base, ...value];
    else if (isMapping(value) && isMapping(base)) out[key] = { ...base, ...value };
    else out[key] = value;
  }
  return out as Settings;
}

function isMapping(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
