// Raw tree → typed Config, every problem reported at once. Which properties a scope may hold, and
// their shapes, ranges and formats, come from the property table (values.ts reads each value); the
// rules that relate several properties are checks.ts's, run on what this returns.
import type { EnvOverride } from './env-overrides.js';
import { clip, type Diagnostics } from './diagnostics.js';
import type { PropertyTable } from './property-table.js';
import { LOCATION_CONDITIONS, type Scope, type Settings } from './properties.js';
import type { Pos, RawEntry, RawNode } from './raw.js';
import { didYouMean } from './suggest.js';
import { got, ValueReader, type ValueOptions } from './values.js';

export interface LocationConfig {
  /** Absent only where a condition (`pathRegex`, `matchMethods`…) says which requests it takes. */
  readonly path: string | undefined;
  readonly settings: Settings;
  readonly pos: Pos;
}

export interface ErrorConfigEntry {
  readonly scode: number | undefined;
  readonly settings: Settings;
  readonly pos: Pos;
}

export interface HostConfig {
  readonly settings: Settings;
  readonly locations: LocationConfig[];
  readonly errorConfigs: ErrorConfigEntry[];
  readonly pos: Pos;
}

/**
 * The validated configuration: only what the files set, read against `properties`, which gives
 * the defaults, the merge rules and redaction to whatever uses it.
 */
export interface Config {
  readonly global: Settings;
  readonly hosts: HostConfig[];
  readonly properties: PropertyTable;
  /** What the environment set over the files (env-overrides.ts); absent when nothing. */
  readonly environment?: readonly EnvOverride[];
}

/**
 * Where each property of a validated scope was written, for the cross-property checks. Its
 * settings hold every property of the table; a module's check reads its own as `S`.
 */
export interface ScopeRecord<S = Settings> {
  readonly scope: Scope;
  readonly path: string;
  readonly settings: S;
  readonly keys: Map<string, RawEntry>;
  readonly pos: Pos;
}

/** A Config with where each of its scopes was written, for the checks. */
export interface Validated {
  readonly config: Config;
  readonly scopes: readonly ScopeRecord[];
}

export interface ValidateOptions extends ValueOptions {
  readonly properties: PropertyTable;
}

const TOP_KEYS = ['global', 'hosts', 'include'];

class Validator {
  readonly scopes: ScopeRecord[] = [];
  private readonly values: ValueReader;
  private readonly properties: PropertyTable;

  constructor(
    readonly diags: Diagnostics,
    options: ValidateOptions,
  ) {
    this.properties = options.properties;
    this.values = new ValueReader(diags, options, options.properties.modules);
  }

  top(root: RawNode): Config | undefined {
    if (root.kind !== 'map') {
      this.diags.error(
        root.pos,
        '',
        `expected a mapping with "global", "hosts" and "include", got ${got(root)}`,
      );
      return undefined;
    }
    let global: Settings = {};
    const hosts: HostConfig[] = [];
    for (const entry of root.entries) {
      if (entry.key === 'global') {
        if (entry.value.kind === 'scalar' && entry.value.value === null) continue;
        global = this.scope(entry.value, 'global', 'global').settings;
      } else if (entry.key === 'hosts') {
        if (entry.value.kind === 'scalar' && entry.value.value === null) continue;
        if (entry.value.kind !== 'list') {
          this.diags.error(
            entry.value.pos,
            'hosts',
            `expected a list of hosts, got ${got(entry.value)}`,
          );
          continue;
        }
        entry.value.items.forEach((item, i) => {
          const host = this.host(item, `hosts[${i}]`);
          if (host) hosts.push(host);
        });
      } else if (entry.key !== 'include') {
        this.diags.warn(
          entry.keyPos,
          clip(entry.key),
          `unknown top-level key, ignored${didYouMean(entry.key, TOP_KEYS)} (expected global, hosts or include)`,
        );
      }
    }
    return { global, hosts, properties: this.properties };
  }

  host(node: RawNode, path: string): HostConfig | undefined {
    if (node.kind !== 'map') {
      this.diags.error(node.pos, path, `expected a host mapping, got ${got(node)}`);
      return undefined;
    }
    const { settings, sections } = this.scope(node, 'host', path);
    const locations: LocationConfig[] = [];
    const errorConfigs: ErrorConfigEntry[] = [];
    const locationsNode = sections.get('locations');
    locationsNode?.items.forEach((item, i) => {
      const p = `${path}.locations[${i}]`;
      if (item.kind !== 'map')
        return this.diags.error(item.pos, p, `expected a location mapping, got ${got(item)}`);
      const { settings: s } = this.scope(item, 'location', p);
      const conditional = LOCATION_CONDITIONS.some((name) =>
        item.entries.some((e) => e.key === name),
      );
      if (s.path === undefined && !conditional) {
        if (!item.entries.some((e) => e.key === 'path'))
          this.diags.error(
            item.pos,
            p,
            `a location needs a "path" or a condition (${LOCATION_CONDITIONS.join(', ')})`,
          );
        return;
      }
      const { path: locationPath, ...rest } = s;
      locations.push({ path: locationPath, settings: rest, pos: item.pos });
    });
    sections.get('errorConfig')?.items.forEach((item, i) => {
      const p = `${path}.errorConfig[${i}]`;
      if (item.kind !== 'map')
        return this.diags.error(
          item.pos,
          p,
          `expected an error configuration mapping, got ${got(item)}`,
        );
      const { scode, ...rest } = this.scope(item, 'errorConfig', p).settings;
      errorConfigs.push({ scode, settings: rest, pos: item.pos });
    });
    return { settings, locations, errorConfigs, pos: node.pos };
  }

  /** One scope's mapping → its settings, plus the raw lists of its nested sections. */
  scope(
    node: RawNode,
    scope: Scope,
    path: string,
  ): { settings: Settings; sections: Map<string, { items: RawNode[] }> } {
    const settings: Record<string, unknown> = {};
    const sections = new Map<string, { items: RawNode[] }>();
    const keys = new Map<string, RawEntry>();
    if (node.kind !== 'map') {
      this.diags.error(node.pos, path, `expected a mapping of properties, got ${got(node)}`);
      return { settings, sections };
    }
    for (const entry of node.entries) {
      const name = this.canonicalName(entry, path);
      const at = `${path}.${clip(name)}`;
      const row = this.properties.row(name);
      // Ferron 1.x starts with a property it does not know, and so does Portico: `validate
      // --strict` is there for pipelines that want it refused.
      if (!row) {
        const here = this.properties.namesIn(scope);
        this.diags.warn(
          entry.keyPos,
          at,
          `unknown property, ignored${didYouMean(entry.key, [...here, ...Object.keys(this.properties.aliases)])}`,
        );
        continue;
      }
      if (!row.scopes.includes(scope)) {
        this.diags.error(
          entry.keyPos,
          at,
          `not valid in ${scopeName(scope)}; it belongs in ${row.scopes.map(scopeName).join(', ')}`,
        );
        continue;
      }
      const earlier = keys.get(name);
      if (earlier) {
        this.diags.error(
          entry.keyPos,
          at,
          `set twice (first at ${earlier.keyPos.line}:${earlier.keyPos.col})`,
        );
        continue;
      }
      keys.set(name, entry);
      if (row.type.kind === 'section') {
        if (entry.value.kind === 'scalar' && entry.value.value === null) continue;
        if (entry.value.kind !== 'list') {
          this.diags.error(entry.value.pos, at, `expected a list, got ${got(entry.value)}`);
          continue;
        }
        sections.set(name, entry.value);
        continue;
      }
      const value = this.values.value(row.type, entry.value, at, row.sensitive);
      if (value !== undefined) settings[name] = value;
    }
    this.scopes.push({ scope, path, settings: settings as Settings, keys, pos: node.pos });
    return { settings: settings as Settings, sections };
  }

  canonicalName(entry: RawEntry, path: string): string {
    const name = this.properties.canonical(entry.key);
    if (name === entry.key || this.properties.isSynonym(entry.key)) return name;
    this.diags.warn(
      entry.keyPos,
      `${path}.${entry.key}`,
      `"${entry.key}" is accepted as the documented "${name}"; write "${name}"`,
    );
    return name;
  }
}

export function scopeName(scope: Scope): string {
  return {
    global: 'global',
    host: 'a host',
    location: 'a location',
    errorConfig: 'an errorConfig',
  }[scope];
}

/**
 * The Config the tree describes and where its scopes were written, even when some of it was
 * wrong (the checks still report in the same run); undefined when the tree is not a mapping.
 */
export function validate(
  root: RawNode,
  diags: Diagnostics,
  options: ValidateOptions,
): Validated | undefined {
  const validator = new Validator(diags, options);
  const config = validator.top(root);
  return config && { config, scopes: validator.scopes };
}
