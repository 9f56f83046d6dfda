// The KDL front end: KDL text → the same raw tree the YAML front end makes (CONTRACT.md's mapping).
// A node's shape is read against the property table: a scalar property is a node with one argument,
// a list a node with several, a mapping a node with children, a list of objects a repeated node
// with `key=value` properties or children. KDL 1.0 is the documented syntax; KDL 2.0 files
// (`#true`) are read too.
import { getLocation, type Document, type Entry, type Node } from '@bgotink/kdl';
import { parse as parseV1 } from '@bgotink/kdl/v1-compat';
import { parse as parseV2 } from '@bgotink/kdl';
import type { Diagnostics } from './diagnostics.js';
import { ALIASES, propertyRow } from './properties.js';
import { rawList, rawMap, scalar, type Pos, type RawEntry, type RawMap, type RawNode, type RawScalarValue } from './raw.js';
import { didYouMean } from './suggest.js';
import type { ObjectSpec, Spec } from './types.js';

interface KdlError extends Error {
  start?: { line: number; column: number; offset: number };
  token?: { text: string };
  errors?: KdlError[];
}

// People (and CONTRACT.md's own example) write `{ a 1; b 2 }`: KDL 1.0's grammar wants a terminator
// after the last node before `}`, which KDL 2.0 dropped. Inserting that `;` changes no line or column
// before it, so every position the parser reports stays true to the file.
const MAX_TERMINATOR_FIXES = 10_000;

function parseKdlDocument(text: string): Document {
  const looksV2 = /(^|[\s=(])#(true|false|null|inf|-inf|nan)\b|(^|[\s=])#+"/.test(text);
  const attempts = looksV2 ? [parseVersion2, parseVersion1] : [parseVersion1, parseVersion2];
  let firstError: unknown;
  for (const attempt of attempts) {
    try {
      return attempt(text);
    } catch (e) {
      firstError ??= e;
    }
  }
  throw firstError;
}

function parseVersion2(text: string): Document {
  return parseV2(text, { as: 'document', storeLocations: true });
}

function parseVersion1(text: string): Document {
  let source = text;
  for (let fixes = 0; ; fixes++) {
    try {
      return parseV1(source, { storeLocations: true });
    } catch (e) {
      const errors = flatten(e as KdlError);
      const offsets = errors.map((err) =>
        err.message.startsWith('Missing node terminator') && err.token?.text === '}' ? err.start?.offset : undefined,
      );
      if (fixes >= MAX_TERMINATOR_FIXES || offsets.length === 0 || offsets.some((o) => o === undefined)) throw e;
      for (const offset of [...new Set(offsets as number[])].sort((a, b) => b - a)) {
        source = `${source.slice(0, offset)};${source.slice(offset)}`;
      }
    }
  }
}

function flatten(e: KdlError): KdlError[] {
  return e.errors && e.errors.length > 0 ? e.errors.flatMap(flatten) : [e];
}

export function parseKdl(text: string, file: string, diags: Diagnostics): RawNode | undefined {
  let doc: Document;
  try {
    doc = parseKdlDocument(text);
  } catch (e) {
    for (const err of flatten(e as KdlError)) {
      const pos = { file, line: err.start?.line ?? 1, col: err.start?.column ?? 1 };
      diags.error(pos, '', `KDL syntax: ${err.message.replace(/ at \d+:\d+$/, '')}`);
    }
    return undefined;
  }
  return new KdlReader(file, diags).document(doc);
}

class KdlReader {
  constructor(
    readonly file: string,
    readonly diags: Diagnostics,
  ) {}

  pos(element: Node | Entry | undefined): Pos {
    const start = element ? getLocation(element)?.start : undefined;
    return { file: this.file, line: start?.line ?? 1, col: start?.column ?? 1 };
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
          this.diags.error(this.pos(node), 'global', `a file has one global block (the first is at ${earlier.keyPos.line}:${earlier.keyPos.col})`);
          continue;
        }
        entries.push({ key: 'global', keyPos: this.pos(node), value: this.scope(node, 'global', []) });
      } else if (name === 'host') {
        firstHost ??= node;
        hosts.push(this.host(node));
      } else if (name === 'include') {
        firstInclude ??= node;
        includes.push(...this.args(node));
      } else {
        this.diags.error(this.pos(node), name, `unknown top-level node${didYouMean(name, ['global', 'host', 'include'])} (expected global, host or include)`);
      }
    }
    if (firstHost) entries.push({ key: 'hosts', keyPos: this.pos(firstHost), value: rawList(hosts, this.pos(firstHost)) });
    if (firstInclude) {
      entries.push({ key: 'include', keyPos: this.pos(firstInclude), value: rawList(includes, this.pos(firstInclude)) });
    }
    return rawMap(entries, { file: this.file, line: 1, col: 1 });
  }

  host(node: Node): RawNode {
    const selectors: RawEntry[] = [];
    for (const entry of node.getPropertyEntries()) {
      const key = entry.getName()!;
      if (key === 'domain' || key === 'ip') selectors.push({ key, keyPos: this.pos(entry), value: this.value(entry) });
      else this.diags.error(this.pos(entry), `host.${key}`, 'a host takes only domain= and ip= as properties; write other properties as children');
    }
    const [first] = node.getArgumentEntries();
    if (first) {
      this.diags.error(this.pos(node), 'host', 'write host domain="example.com" (a property), not an argument');
      // Read it as the domain all the same, so the mistake is reported once rather than cascading.
      if (!selectors.some((e) => e.key === 'domain')) selectors.push({ key: 'domain', keyPos: this.pos(first), value: this.value(first) });
    }
    return this.scope(node, 'host', selectors);
  }

  /** The children of a scope node → the YAML-shaped mapping, sections gathered into lists. */
  scope(node: Node, scope: 'global' | 'host' | 'location' | 'errorConfig', leading: RawEntry[]): RawMap {
    const entries = [...leading];
    const locations: RawNode[] = [];
    const errorConfigs: RawNode[] = [];
    let firstLocation: Node | undefined;
    let firstErrorConfig: Node | undefined;
    for (const child of node.children?.nodes ?? []) {
      const name = child.getName();
      if (name === 'location' && scope === 'host') {
        firstLocation ??= child;
        locations.push(this.location(child));
        continue;
      }
      if (name === 'errorConfig' && scope === 'host') {
        firstErrorConfig ??= child;
        errorConfigs.push(this.errorConfig(child));
        continue;
      }
      if (name === 'location' || name === 'errorConfig') {
        this.diags.error(this.pos(child), name, `${name} blocks belong directly inside a host`);
        continue;
      }
      const row = propertyRow(ALIASES[name] ?? name);
      if (row?.type.kind === 'section') {
        this.diags.error(this.pos(child), name, 'write location "/path" { … } and errorConfig scode=404 { … } blocks inside a host');
        continue;
      }
      const value = row ? this.shaped(child, row.type, name) : this.generic(child);
      const repeated = row?.type.kind === 'list' ? entries.find((e) => e.key === name) : undefined;
      if (repeated && repeated.value.kind === 'list' && value.kind === 'list') repeated.value.items.push(...value.items);
      else entries.push({ key: name, keyPos: this.pos(child), value });
    }
    if (firstLocation) entries.push({ key: 'locations', keyPos: this.pos(firstLocation), value: rawList(locations, this.pos(firstLocation)) });
    if (firstErrorConfig) {
      entries.push({ key: 'errorConfig', keyPos: this.pos(firstErrorConfig), value: rawList(errorConfigs, this.pos(firstErrorConfig)) });
    }
    return rawMap(entries, this.pos(node));
  }

  location(node: Node): RawNode {
    const args = node.getArgumentEntries();
    const leading: RawEntry[] = [];
    // No path at all is left to the validator's "a location needs a path", as for YAML.
    if (args.length > 1) this.diags.error(this.pos(args[1]), 'location', 'write location "/path" { … } with exactly one path');
    if (args[0]) leading.push({ key: 'path', keyPos: this.pos(args[0]), value: this.value(args[0]) });
    for (const p of node.getPropertyEntries()) {
      this.diags.error(this.pos(p), `location.${p.getName()}`, 'a location takes its path as its only argument; write properties as children');
    }
    return this.scope(node, 'location', leading);
  }

  errorConfig(node: Node): RawNode {
    const leading: RawEntry[] = [];
    for (const p of node.getPropertyEntries()) {
      if (p.getName() === 'scode') leading.push({ key: 'scode', keyPos: this.pos(p), value: this.value(p) });
      else this.diags.error(this.pos(p), `errorConfig.${p.getName()}`, 'an errorConfig takes only scode= as a property; write others as children');
    }
    if (node.getArgumentEntries().length > 0) this.diags.error(this.pos(node), 'errorConfig', 'write errorConfig scode=404 { … }');
    return this.scope(node, 'errorConfig', leading);
  }

  /** A node read as the spec says it is written. */
  shaped(node: Node, spec: Spec, name: string): RawNode {
    const args = node.getArgumentEntries();
    const pos = this.pos(node);
    switch (spec.kind) {
      case 'object':
        this.noArguments(node, name);
        return this.fields(node, spec);
      case 'map':
        this.noArguments(node, name);
        return rawMap(
          [
            ...node.getPropertyEntries().map((p) => ({ key: p.getName()!, keyPos: this.pos(p), value: this.value(p) })),
            ...(node.children?.nodes ?? []).map((c) => ({ key: c.getName(), keyPos: this.pos(c), value: this.shaped(c, spec.values, c.getName()) })),
          ],
          pos,
        );
      case 'list':
        if (spec.of.kind === 'object') return rawList([this.fields(node, spec.of)], pos);
        this.noChildren(node, name);
        return rawList(this.args(node), args[0] ? this.pos(args[0]) : pos);
      case 'nullable':
        if (args.length === 1 && args[0]!.getValue() === null && !node.children) return this.value(args[0]!);
        return this.shaped(node, spec.of, name);
      case 'union': {
        const listOption = spec.options.find((o) => o.kind === 'list');
        if (listOption && args.length > 1) return this.shaped(node, listOption, name);
        return this.single(node, name, false);
      }
      case 'bool':
        return this.single(node, name, true);
      default:
        return this.single(node, name, false);
    }
  }

  /** A scalar property: one argument; a bare boolean directive (`health`) means true. */
  single(node: Node, name: string, bareMeansTrue: boolean): RawNode {
    const args = node.getArgumentEntries();
    this.noChildren(node, name);
    for (const p of node.getPropertyEntries()) this.diags.error(this.pos(p), `${name}.${p.getName()}`, `${name} takes a value, not properties`);
    if (args.length === 0) {
      if (bareMeansTrue) return scalar(true, this.pos(node));
      this.diags.error(this.pos(node), name, 'expects a value');
      return scalar(null, this.pos(node));
    }
    if (args.length > 1) return rawList(this.args(node), this.pos(args[0]));
    return this.value(args[0]!);
  }

  /** One object: `key=value` properties and children, each field read by its own spec. */
  fields(node: Node, spec: ObjectSpec): RawMap {
    const entries: RawEntry[] = node.getPropertyEntries().map((p) => ({ key: p.getName()!, keyPos: this.pos(p), value: this.value(p) }));
    for (const child of node.children?.nodes ?? []) {
      const key = child.getName();
      const field = spec.fields[key] ?? Object.values(spec.fields).find((f) => f.aliases?.includes(key));
      entries.push({ key, keyPos: this.pos(child), value: field ? this.shaped(child, field.spec, key) : this.generic(child) });
    }
    if (node.getArgumentEntries().length > 0) {
      this.diags.error(this.pos(node), node.getName(), `write the fields of a ${spec.label} as key=value properties or children`);
    }
    return rawMap(entries, this.pos(node));
  }

  /** A node of an unknown property: read it by its look, so the validator can name it. */
  generic(node: Node): RawNode {
    const args = node.getArgumentEntries();
    if (node.children) return rawMap(node.children.nodes.map((c) => ({ key: c.getName(), keyPos: this.pos(c), value: this.generic(c) })), this.pos(node));
    if (args.length === 0) return scalar(true, this.pos(node));
    return args.length === 1 ? this.value(args[0]!) : rawList(this.args(node), this.pos(args[0]));
  }

  args(node: Node): RawNode[] {
    return node.getArgumentEntries().map((a) => this.value(a));
  }

  value(entry: Entry): RawNode {
    const v = entry.getValue() as RawScalarValue;
    return scalar(typeof v === 'number' && !Number.isSafeInteger(v) && Number.isInteger(v) ? BigInt(v) : v, this.pos(entry));
  }

  noArguments(node: Node, name: string): void {
    if (node.getArgumentEntries().length > 0) this.diags.error(this.pos(node), name, `${name} takes children { … }, not arguments`);
  }

  noChildren(node: Node, name: string): void {
    if (node.children && node.children.nodes.length > 0) this.diags.error(this.pos(node.children.nodes[0]), name, `${name} takes arguments, not children`);
  }
}
