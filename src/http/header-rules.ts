// What a location's settings do to every response head, in one defined order: `removeHeaders`
// takes names out, `setHeaders` replaces or adds, `customHeaders` adds where the name is still
// absent, and `Server: Portico` goes last unless one of them dealt with `Server`. Compiled once per
// distinct set (plan/compile.ts), so heads kept for files and error pages are finished once per set
// (respond.ts KeptHead).
import { indexOfHeader } from './header-list.js';

export interface ConfiguredHeader {
  readonly name: string;
  readonly lower: string;
  readonly value: string;
  /** The value holds `{path}`, replaced per request. */
  readonly hasPath: boolean;
}

export interface HeaderRules {
  /** removeHeaders, lower-case. */
  readonly remove: readonly string[];
  readonly set: readonly ConfiguredHeader[];
  readonly custom: readonly ConfiguredHeader[];
  /** A value of `set` or `custom` holds `{path}`: the head differs per request. */
  readonly hasPath: boolean;
  /** What goes in `Server`; undefined: none (removed, and nothing set in its place). */
  readonly server: ConfiguredHeader | undefined;
}

const SERVER: ConfiguredHeader = Object.freeze({
  name: 'Server',
  lower: 'server',
  value: 'Portico',
  hasPath: false,
});

// What Node accepts in a header value; a `{path}` that would make a value invalid skips it.
const VALID_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * Headers as written in settings, one per name (compared case-insensitively): where a location's
 * mapping extended the host's with the same name spelt otherwise, the later (the location's) wins.
 */
export function headerList(map: Record<string, string> | undefined): ConfiguredHeader[] {
  const byName = new Map<string, ConfiguredHeader>();
  for (const [name, value] of Object.entries(map ?? {})) {
    const lower = name.toLowerCase();
    byName.delete(lower);
    byName.set(lower, { name, lower, value, hasPath: value.includes('{path}') });
  }
  return [...byName.values()].map((h) => Object.freeze(h));
}

export function headerRules(
  remove: readonly string[],
  set: readonly ConfiguredHeader[],
  custom: readonly ConfiguredHeader[],
): HeaderRules {
  const removed = [...new Set(remove.map((name) => name.toLowerCase()))];
  // The server's own `Server` is the fallback of both lists: a set or custom one replaces it.
  const named = set.find((h) => h.lower === 'server') ?? custom.find((h) => h.lower === 'server');
  return Object.freeze({
    remove: Object.freeze(removed),
    set: Object.freeze(set.filter((h) => h.lower !== 'server')),
    custom: Object.freeze(custom.filter((h) => h.lower !== 'server')),
    hasPath: set.some((h) => h.hasPath) || custom.some((h) => h.hasPath),
    server: named ?? (removed.includes('server') ? undefined : SERVER),
  });
}

/** The rules of a response outside any configuration's: only `Server: Portico`. */
export const NO_RULES: HeaderRules = headerRules([], [], []);

/**
 * Applies the rules to `headers` in place. Whatever `Server` the list held (a backend's) is
 * dropped first: the server's is Portico's, or the one the settings name, or none.
 */
export function applyHeaderRules(
  headers: string[],
  rules: HeaderRules,
  originalPath: string,
): void {
  removeAll(headers, 'server');
  for (const lower of rules.remove) removeAll(headers, lower);
  for (const h of rules.set) {
    const value = valueOf(h, originalPath);
    if (value === undefined) continue;
    removeAll(headers, h.lower);
    headers.push(h.name, value);
  }
  for (const h of rules.custom) {
    if (indexOfHeader(headers, h.lower) >= 0) continue;
    const value = valueOf(h, originalPath);
    if (value !== undefined) headers.push(h.name, value);
  }
  const server = rules.server;
  if (server !== undefined)
    headers.push(server.name, valueOf(server, originalPath) ?? SERVER.value);
}

function valueOf(h: ConfiguredHeader, originalPath: string): string | undefined {
  if (!h.hasPath) return h.value;
  const value = h.value.replaceAll('{path}', () => originalPath);
  return VALID_VALUE.test(value) ? value : undefined;
}

function removeAll(headers: string[], lower: string): void {
  for (let i = indexOfHeader(headers, lower); i >= 0; i = indexOfHeader(headers, lower))
    headers.splice(i, 2);
}
