// A warning for the shape of pattern that makes a backtracking engine slow on long input: one that
// may start anywhere and begins with an unbounded repetition (`.*\.php$`, `[^/]+\.tar\.gz$`). Ferron's
// Rust engine runs it in linear time; JavaScript's tries it from every position, so its time grows
// with the square of the input's length, which only the request head's limits bound. Anchored, or
// begun with a literal (`/[^/]+\.tar\.gz$`), the same pattern is linear again.
import type { Diagnostics } from './diagnostics.js';
import type { ScopeRecord } from './validate.js';

// Leading inline flags, an optional group opening, then `.`, an escape (`\w`, `\pL`, `\p{…}`) or a
// class (`[^/]`, `[[:alpha:]]` inside), then `*`, `+` or `{n,}`.
const SLOW_START =
  /^(?:\(\?[a-zA-Z]+\))*(?:\((?:\?(?:[a-zA-Z]*:|P?<[^>]*>))?)?(?:\.|\\p\{[^}]*\}|\\[pP]?[a-zA-Z]|\[\^?\]?(?:\[:[a-z]+:\]|\\.|[^\]])*\])(?:[*+]|\{\d+,\})/;

const MESSAGE =
  'may start anywhere and begins with a repetition: it is tried from every position of the input, in time growing with the square of its length (up to the 16 KB of a request head, 64 KB over HTTP/2); anchor it with ^ or begin it with a literal, such as /[^/]+\\.gz$';

export function isSlowPattern(source: string): boolean {
  return SLOW_START.test(source);
}

/** Warns, at the pattern, about each slow condition pattern of a location. */
export function checkConditionPatterns(scopes: readonly ScopeRecord[], diags: Diagnostics): void {
  for (const record of scopes) {
    if (record.scope !== 'location') continue;
    const { pathRegex, matchHeaders, matchQuery } = record.settings;
    const entry = record.keys.get('pathRegex');
    if (pathRegex !== undefined && entry && isSlowPattern(pathRegex))
      diags.warn(entry.value.pos, `${record.path}.pathRegex`, MESSAGE);
    for (const [name, map] of [
      ['matchHeaders', matchHeaders],
      ['matchQuery', matchQuery],
    ] as const) {
      const node = record.keys.get(name)?.value;
      if (map === undefined || node?.kind !== 'map') continue;
      for (const e of node.entries)
        if (Object.hasOwn(map, e.key) && isSlowPattern(map[e.key]!))
          diags.warn(e.value.pos, `${record.path}.${name}.${e.key}`, MESSAGE);
    }
  }
}
