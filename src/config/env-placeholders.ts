// `{{env.NAME}}` in a configuration: replaced by the variable's value wherever a string holds one;
// an unset variable is an error at the string's position.
import type { Diagnostics } from './diagnostics.js';
import { stringScalars, type RawNode } from './raw.js';

const ENV_PLACEHOLDER = /\{\{\s*env\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/** `{{env.NAME}}` in one string replaced; `missing` hears of each unset name (it stays as written). */
export function substitute(
  text: string,
  env: NodeJS.ProcessEnv,
  missing: (name: string, whole: string) => void,
): string {
  if (!text.includes('{{')) return text;
  return text.replace(ENV_PLACEHOLDER, (whole, name: string) => {
    const value = env[name];
    if (value === undefined) missing(name, whole);
    return value ?? whole;
  });
}

export function interpolate(root: RawNode, env: NodeJS.ProcessEnv, diags: Diagnostics): void {
  let paths: Map<RawNode, string> | undefined;
  for (const node of stringScalars(root)) {
    node.value = substitute(node.value as string, env, (name, whole) => {
      paths ??= pathsOf(root);
      diags.error(
        node.pos,
        paths.get(node) ?? '',
        `environment variable ${name} is not set (used as ${whole})`,
      );
    });
  }
}

/** Every node's model path (the raw tree has the YAML shape), worked out only when a message needs one. */
function pathsOf(
  node: RawNode,
  path = '',
  into = new Map<RawNode, string>(),
): Map<RawNode, string> {
  into.set(node, path);
  if (node.kind === 'list') node.items.forEach((item, i) => pathsOf(item, `${path}[${i}]`, into));
  else if (node.kind === 'map')
    for (const e of node.entries) pathsOf(e.value, path ? `${path}.${e.key}` : e.key, into);
  return into;
}
