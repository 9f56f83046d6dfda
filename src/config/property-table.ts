// The property table of one build: the core rows (properties.ts) and the rows each of its modules
// brings, in the order the reference lists them. Whatever reads properties by name (validation,
// the KDL mapping, `convert`, redaction, defaults, the JSON Schema, the docs) is given a table;
// modules/registry.ts makes the build's from its modules, so this folder imports none of them.
import { own } from './own.js';
import { CORE_PROPERTIES, type PropertyRow, type PropertyRows, type Scope } from './properties.js';

/** What a module brings to the table: its name (what `loadModules` says) and its rows. */
export interface PropertyOwner {
  readonly name: string;
  readonly properties: PropertyRows;
}

export class PropertyTable {
  /** Every property, in the reference's order. */
  readonly names: readonly string[];
  /** What `loadModules` may name, in the registry's order. */
  readonly modules: readonly string[];
  /** Ferron's other spellings → the property each stands for. */
  readonly aliases: Readonly<Record<string, string>>;
  /** property → its default, for those that have one. */
  readonly defaults: readonly (readonly [string, unknown])[];
  /**
   * object property → its fields' defaults: a block that is present gets them (an `admin` block
   * that only sets `listen` has the secure-default profile's switches).
   */
  readonly fieldDefaults: readonly (readonly [string, Readonly<Record<string, unknown>>])[];
  private readonly rows: ReadonlyMap<string, PropertyRow>;
  /** property → the modules that brought it (a row several modules share lists each). */
  private readonly owners: ReadonlyMap<string, readonly string[]>;

  /** @internal propertyTable() checks and orders what it is given. */
  constructor(
    names: readonly string[],
    rows: ReadonlyMap<string, PropertyRow>,
    owners: ReadonlyMap<string, readonly string[]>,
    modules: readonly string[],
    aliases: Readonly<Record<string, string>>,
  ) {
    this.names = names;
    this.rows = rows;
    this.owners = owners;
    this.modules = modules;
    this.aliases = aliases;
    const ordered = names.map((name) => [name, rows.get(name)!] as const);
    this.defaults = ordered.flatMap(([name, row]) =>
      row.default === undefined ? [] : [[name, row.default] as const],
    );
    this.fieldDefaults = ordered.flatMap(([name, { type }]) => {
      if (type.kind !== 'object') return [];
      const fields = Object.entries(type.fields).filter(([, f]) => f.default !== undefined);
      return fields.length === 0
        ? []
        : [[name, Object.fromEntries(fields.map(([field, f]) => [field, f.default]))] as const];
    });
  }

  row(name: string): PropertyRow | undefined {
    return this.rows.get(name);
  }

  /** The property a name written in a file stands for: itself, or what its alias names. */
  canonical(name: string): string {
    return own(this.aliases, name) ?? name;
  }

  /** A name accepted for a property without a warning (PropertyRow.synonyms). */
  isSynonym(name: string): boolean {
    const row = this.rows.get(this.canonical(name));
    return row?.synonyms?.includes(name) === true;
  }

  /** The modules that read a property; empty for one that needs none. */
  modulesOf(name: string): readonly string[] {
    const declared = this.rows.get(name)?.module;
    if (declared !== undefined) return typeof declared === 'string' ? [declared] : declared;
    return this.owners.get(name) ?? [];
  }

  /** The properties valid in a scope, in the reference's order. */
  namesIn(scope: Scope): string[] {
    return this.names.filter((n) => this.rows.get(n)!.scopes.includes(scope));
  }
}

/** The table of a build with these modules: the core rows and theirs. */
export function propertyTable(modules: readonly PropertyOwner[]): PropertyTable {
  const rows = new Map<string, PropertyRow>(Object.entries(CORE_PROPERTIES));
  const coreNames = [...rows.keys()];
  const owners = new Map<string, string[]>();
  const placed: { name: string; after: string | undefined; module: string }[] = [];
  const moduleNames: string[] = [];
  for (const module of modules) {
    if (moduleNames.includes(module.name))
      throw new Error(`two modules are named "${module.name}"`);
    moduleNames.push(module.name);
    for (const [name, row] of Object.entries(module.properties)) {
      const earlier = rows.get(name);
      if (earlier !== undefined && (earlier !== row || !owners.has(name)))
        throw new Error(`module "${module.name}" brings a property "${name}" the table has`);
      owners.set(name, [...(owners.get(name) ?? []), module.name]);
      if (earlier !== undefined) continue;
      rows.set(name, row);
      placed.push({ name, after: row.listedAfter, module: module.name });
    }
  }
  return new PropertyTable(
    referenceOrder(coreNames, placed, rows),
    rows,
    owners,
    moduleNames,
    aliasesOf(modules, rows),
  );
}

/**
 * The core rows in their order, each module row after the property its `listedAfter` names, or
 * else after its module's previous row; one whose anchor this build lacks (a test build without
 * the module named) falls back the same way, and a module's first row then goes at the end.
 */
function referenceOrder(
  coreNames: readonly string[],
  placed: readonly { name: string; after: string | undefined; module: string }[],
  rows: ReadonlyMap<string, PropertyRow>,
): string[] {
  const following = new Map<string | undefined, string[]>();
  const previous = new Map<string, string>();
  for (const { name, after, module } of placed) {
    const anchor = after !== undefined && rows.has(after) ? after : previous.get(module);
    following.set(anchor, [...(following.get(anchor) ?? []), name]);
    previous.set(module, name);
  }
  const order: string[] = [];
  const visit = (name: string): void => {
    order.push(name);
    for (const next of following.get(name) ?? []) visit(next);
  };
  for (const name of coreNames) visit(name);
  for (const name of following.get(undefined) ?? []) visit(name);
  if (order.length !== rows.size)
    throw new Error('the listedAfter of module properties go round in a circle');
  return order;
}

/** Ferron's spellings, the modules' first: each must stand for one property and be none itself. */
function aliasesOf(
  modules: readonly PropertyOwner[],
  rows: ReadonlyMap<string, PropertyRow>,
): Record<string, string> {
  const aliases: Record<string, string> = {};
  const spellings: [string, PropertyRow][] = [
    ...modules.flatMap((m) => Object.entries(m.properties)),
    ...Object.entries(CORE_PROPERTIES),
  ];
  for (const [name, row] of spellings) {
    for (const alias of [...(row.aliases ?? []), ...(row.synonyms ?? [])]) {
      if (rows.has(alias) || (Object.hasOwn(aliases, alias) && aliases[alias] !== name))
        throw new Error(`"${alias}" cannot stand for "${name}": it names another property`);
      aliases[alias] = name;
    }
  }
  return aliases;
}

/** The table of a build without modules: what configuration code reads when given none. */
export const CORE_TABLE = propertyTable([]);
