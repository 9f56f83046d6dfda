// The KDL front end: KDL text → the same raw tree the YAML front end makes (CONTRACT.md's mapping).
// A node's shape is read against the property table: a scalar property is a node with one argument,
// a list a node with several, a mapping a node with children, a list of objects a repeated node
// with `key=value` properties or children. KDL 1.0 is the documented syntax; KDL 2.0 files
// (`#true`) are read too.
import { getLocation, type Document, type Entry, type Node } from '@bgotink/kdl';
import { clip, type Diagnostics } from './diagnostics.js';
import { parseKdlText, type Terminators } from './kdl-syntax.js';
import { own } from './own.js';
import type { PropertyTable } from './property-table.js';
import type { Scope } from './properties.js';
import {
  rawList,
  rawMap,
  scalar,
  type Pos,
  type RawEntry,
  type RawMap,
  type RawNode,
  type RawScalarValue,
} from './raw.js';
import { didYouMean } from './suggest.js';
import type { ObjectSpec, Spec } from './types.js';

export function parseKdl(
  text: string,
  file: string,
  diags: Diagnostics,
  properties: PropertyTable,
): RawNode | undefined {
  const parsed = parseKdlText(text, file, diags);
  return parsed && new KdlReader(file, diags, parsed.terminators, properties).document(parsed.doc);
}

/**
 * Reads the document into the raw tree. Each method is given the model path of what it reads
 * (`hosts[0].locations[1]`), so its messages name the property as the validator's do; a node it
 * has already refused is left out of the tree, so that it is not reported a second time.
 */
class KdlReader {
  constructor(
    readonly file: string,
    readonly diags: Diagnostics,
    readonly terminators: Terminators,
    readonly properties: PropertyTable,
  ) {}

  pos(element: Node | Entry | undefined): Pos {
    const start = element ? getLocation(element)?.start : undefined;
    if (!start) return { file: this.file, line: 1, col: 1 };
    return {
      file: this.file,
      line: start.line,
      col: this.terminators.column(start.line, start.column),
    };
  }

  document(doc: Document): RawMap {
    const entries: RawEntry[] = [];
    const hosts: RawNode[] = [];
    const includes: RawNode[] = [];
    let firstHost: Node | undefined;
    let firstInclude: Node | undefined;
    for (const node of doc.nodes) {
      const name = node.getName();
      if (name === 'global') {
        this.noArguments(node, 'global');
        const earlier = entries.find((e) => e.key === 'global');
        if (earlier) {
          this.diags.error(
            this.pos(node),
            'global',
            `a file has one global block (the first is at ${earlier.keyPos.line}:${earlier.keyPos.col})`,
          );
          continue;
        }
        entries.push({
          key: 'global',
          keyPos: this.pos(node),
          value: this.scope(node, 'global', [], 'global'),
        });
      } else if (name === 'host') {
        firstHost ??= node;
        hosts.push(this.host(node, `hosts[${hosts.length}]`));
      } else if (name === 'include') {
        firstInclude ??= node;
        includes.push(...this.args(node));
      } else {
        this.diags.warn(
          this.pos(node),
          clip(name),
          `unknown top-level node, ignored${didYouMean(name, ['global', 'host', 'include'])} (expected global, host or include)`,
        );
      }
    }
    if (firstHost)
      entries.push({
        key: 'hosts',
        keyPos: this.pos(firstHost),
        value: rawList(hosts, this.pos(firstHost)),
      });
    if (firstInclude) {
      entries.push({
        key: 'include',
        keyPos: this.pos(firstInclude),
        value: rawList(includes, this.pos(firstInclude)),
      });
    }
    return rawMap(entries, { file: this.file, line: 1, col: 1 });
  }

  host(node: Node, path: string): RawNode {
    const selectors: RawEntry[] = [];
    for (const entry of node.getPropertyEntries()) {
      const key = entry.getName()!;
      if (key === 'domain' || key === 'ip')
        selectors.push({ key, keyPos: this.pos(entry), value: this.value(entry) });
      else
        this.diags.error(
          this.pos(entry),
          `${path}.${clip(key)}`,
          'a host takes only domain= and ip= as properties; write other properties as children',
        );
    }
    const [first] = node.getArgumentEntries();
    if (first) {
      this.diags.error(
        this.pos(node),
        path,
        'write host domain="example.com" (a property), not an argument',
      );
      // Read it as the domain all the same, so the mistake is reported once rather than cascading.
      if (!selectors.some((e) => e.key === 'domain'))
        selectors.push({ key: 'domain', keyPos: this.pos(first), value: this.value(first) });
    }
    return this.scope(node, 'host', selectors, path);
  }

  /** The children of a scope node → the YAML-shaped mapping, sections gathered into lists. */
  scope(node: Node, scope: Scope, leading: RawEntry[], path: string): RawMap {
    const entries = [...leading];
    const locations: RawNode[] = [];
    const errorConfigs: RawNode[] = [];
    let firstLocation: Node | undefined;
    let firstErrorConfig: Node | undefined;
    for (const child of node.children?.nodes ?? []) {
      const name = child.getName();
      const at = `${path}.${clip(this.properties.canonical(name))}`;
      if (name === 'location' && scope === 'host') {
        firstLocation ??= child;
        locations.push(this.location(child, `${path}.locations[${locations.length}]`));
        continue;
      }
      if (name === 'errorConfig' && scope === 'host') {
        firstErrorConfig ??= child;
        errorConfigs.push(this.errorConfig(child, `${path}.errorConfig[${errorConfigs.length}]`));
        continue;
      }
      if (name === 'location' || name === 'errorConfig') {
        this.diags.error(this.pos(child), at, `${name} blocks belong directly inside a host`);
        continue;
      }
      const row = this.properties.row(this.properties.canonical(name));
      if (row?.type.kind === 'section') {
        this.diags.error(
          this.pos(child),
          at,
          'write location "/path" { … } and errorConfig scode=404 { … } blocks inside a host',
        );
        continue;
      }
      if (!row) {
        // Named here rather than by the validator, whose suggestions are the YAML names ("locations").
        this.diags.warn(
          this.pos(child),
          at,
          `unknown property, ignored${didYouMean(name, kdlNames(this.properties, scope))}`,
        );
        continue;
      }
      const repeated = row.type.kind === 'list' ? entries.find((e) => e.key === name) : undefined;
      const index = repeated?.value.kind === 'list' ? repeated.value.items.length : 0;
      const value = this.shaped(child, row.type, at, index);
      if (!value) continue;
      if (repeated && repeated.value.kind === 'list' && value.kind === 'list')
        repeated.value.items.push(...value.items);
      else entries.push({ key: name, keyPos: this.pos(child), value });
    }
    if (firstLocation)
      entries.push({
        key: 'locations',
        keyPos: this.pos(firstLocation),
        value: rawList(locations, this.pos(firstLocation)),
      });
    if (firstErrorConfig) {
      entries.push({
        key: 'errorConfig',
        keyPos: this.pos(firstErrorConfig),
        value: rawList(errorConfigs, this.pos(firstErrorConfig)),
      });
    }
    return rawMap(entries, this.pos(node));
  }

  location(node: Node, path: string): RawNode {
    const args = node.getArgumentEntries();
    const leading: RawEntry[] = [];
    // No path at all is left to the validator's "a location needs a path", as for YAML.
    if (args.length > 1)
      this.diags.error(
        this.pos(args[1]),
        path,
        'write location "/path" { … } with exactly one path',
      );
    if (args[0])
      leading.push({ key: 'path', keyPos: this.pos(args[0]), value: this.value(args[0]) });
    for (const p of node.getPropertyEntries()) {
      this.diags.error(
        this.pos(p),
        `${path}.${clip(p.getName()!)}`,
        'a location takes its path as its only argument; write properties as children',
      );
    }
    return this.scope(node, 'location', leading, path);
  }

  errorConfig(node: Node, path: string): RawNode {
    const leading: RawEntry[] = [];
    for (const p of node.getPropertyEntries()) {
      if (p.getName() === 'scode')
        leading.push({ key: 'scode', keyPos: this.pos(p), value: this.value(p) });
      else
        this.diags.error(
          this.pos(p),
          `${path}.${clip(p.getName()!)}`,
          'an errorConfig takes only scode= as a property; write others as children',
        );
    }
    if (node.getArgumentEntries().length > 0)
      this.diags.error(this.pos(node), path, 'write errorConfig scode=404 { … }');
    return this.scope(node, 'errorConfig', leading, path);
  }

  /**
   * A node read as the spec says it is written; undefined when it is refused here. `index` is the
   * node's place among repeated nodes of a list of objects (`users` written twice).
   */
  shaped(node: Node, spec: Spec, path: string, index = 0): RawNode | undefined {
    const args = node.getArgumentEntries();
    const pos = this.pos(node);
    switch (spec.kind) {
      case 'object':
        this.noArguments(node, path);
        return this.fields(node, spec, path);
      case 'map': {
        this.noArguments(node, path);
        const entries: RawEntry[] = node
          .getPropertyEntries()
          .map((p) => ({ key: p.getName()!, keyPos: this.pos(p), value: this.value(p) }));
        for (const c of node.children?.nodes ?? []) {
          const value = this.shaped(c, spec.values, `${path}.${clip(c.getName())}`);
          if (value) entries.push({ key: c.getName(), keyPos: this.pos(c), value });
        }
        return rawMap(entries, pos);
      }
      case 'list':
        if (spec.of.kind === 'object')
          return rawList([this.fields(node, spec.of, `${path}[${index}]`)], pos);
        this.noChildren(node, path);
        return rawList(this.args(node), args[0] ? this.pos(args[0]) : pos);
      case 'nullable':
        if (args.length === 1 && args[0]!.getValue() === null && !node.children)
          return this.value(args[0]!);
        return this.shaped(node, spec.of, path, index);
      case 'union': {
        const listOption = spec.options.find((o) => o.kind === 'list');
        if (listOption && args.length > 1) return this.shaped(node, listOption, path, index);
        return this.single(node, path, false);
      }
      case 'bool':
        return this.single(node, path, true);
      default:
        return this.single(node, path, false);
    }
  }

  /** A scalar property: one argument; a bare boolean directive (`health`) means true. */
  single(node: Node, path: string, bareMeansTrue: boolean): RawNode | undefined {
    const args = node.getArgumentEntries();
    this.noChildren(node, path);
    for (const p of node.getPropertyEntries())
      this.diags.error(
        this.pos(p),
        `${path}.${clip(p.getName()!)}`,
        `${clip(node.getName())} takes a value, not properties`,
      );
    if (args.length === 0) {
      if (bareMeansTrue) return scalar(true, this.pos(node));
      this.diags.error(this.pos(node), path, 'expects a value');
      return undefined;
    }
    if (args.length > 1) return rawList(this.args(node), this.pos(args[0]));
    return this.value(args[0]!);
  }

  /** One object: `key=value` properties and children, each field read by its own spec. */
  fields(node: Node, spec: ObjectSpec, path: string): RawMap {
    const entries: RawEntry[] = node
      .getPropertyEntries()
      .map((p) => ({ key: p.getName()!, keyPos: this.pos(p), value: this.value(p) }));
    for (const child of node.children?.nodes ?? []) {
      const key = child.getName();
      const field =
        own(spec.fields, key) ?? Object.values(spec.fields).find((f) => f.aliases?.includes(key));
      const value = field ? this.shaped(child, field.spec, `${path}.${key}`) : this.generic(child);
      if (value) entries.push({ key, keyPos: this.pos(child), value });
    }
    if (node.getArgumentEntries().length > 0) {
      this.diags.error(
        this.pos(node),
        path,
        `write the fields of a ${spec.label} as key=value properties or children`,
      );
    }
    return rawMap(entries, this.pos(node));
  }

  /** A node of an unknown field: read it by its look, so the validator can name it. */
  generic(node: Node): RawNode {
    const args = node.getArgumentEntries();
    if (node.children)
      return rawMap(
        node.children.nodes.map((c) => ({
          key: c.getName(),
          keyPos: this.pos(c),
          value: this.generic(c),
        })),
        this.pos(node),
      );
    if (args.length === 0) return scalar(true, this.pos(node));
    return args.length === 1 ? this.value(args[0]!) : rawList(this.args(node), this.pos(args[0]));
  }

  args(node: Node): RawNode[] {
    return node.getArgumentEntries().map((a) => this.value(a));
  }

  value(entry: Entry): RawNode {
    const v = entry.getValue() as RawScalarValue;
    return scalar(
      typeof v === 'number' && !Number.isSafeInteger(v) && Number.isInteger(v) ? BigInt(v) : v,
      this.pos(entry),
    );
  }

  noArguments(node: Node, path: string): void {
    if (node.getArgumentEntries().length > 0)
      this.diags.error(
        this.pos(node),
        path,
        `${clip(node.getName())} takes children { … }, not arguments`,
      );
  }

  noChildren(node: Node, path: string): void {
    if (node.children && node.children.nodes.length > 0)
      this.diags.error(
        this.pos(node.children.nodes[0]),
        path,
        `${clip(node.getName())} takes arguments, not children`,
      );
  }
}

/** The names a scope's nodes may have in KDL: its properties, with `location` for `locations`. */
function kdlNames(properties: PropertyTable, scope: Scope): string[] {
  return [
    ...properties.namesIn(scope).map((n) => (n === 'locations' ? 'location' : n)),
    ...Object.keys(properties.aliases),
  ];
}
