// `portico convert`: one configuration file in the other syntax. It works on the file's own raw
// tree, so `include` lines and `{{env.NAME}}` placeholders are carried over as written; Ferron's
// alternative spellings come out under their documented names, and what YAML wrote without a value
// (`admin:`, `health:`, `locations:`) as what it stands for, since KDL has no null for a block.
import { Document, isMap, isPair, isScalar, isSeq } from 'yaml';
import { writeKdl } from './kdl-write.js';
import { own } from './own.js';
import type { PropertyTable } from './property-table.js';
import {
  rawList,
  rawMap,
  scalar,
  toPlain,
  type RawEntry,
  type RawMap,
  type RawNode,
} from './raw.js';
import type { Spec } from './types.js';

/**
 * `properties`: the table the file was read against; `endComments`: the comments after the file's
 * last entry (attachComments).
 */
export function toKdl(
  root: RawMap,
  properties: PropertyTable,
  endComments: readonly string[] = [],
): string {
  return writeKdl(canonicalize(root, properties), properties, endComments);
}

export function toYaml(
  root: RawMap,
  properties: PropertyTable,
  endComments: readonly string[] = [],
): string {
  const tree = canonicalize(root, properties);
  const doc = new Document(toPlain(tree), { aliasDuplicateObjects: false });
  placeComments(tree, doc.contents);
  if (endComments.length > 0) doc.comment = endComments.join('\n');
  return doc.toString({ lineWidth: 0 });
}

/**
 * Puts each raw entry's comments before its key in the YAML document built from the same tree
 * (same order); the first entry's of a list item go before the item's dash.
 */
function placeComments(raw: RawNode, node: unknown, firstPlaced = false): void {
  if (raw.kind === 'list' && isSeq(node)) {
    raw.items.forEach((item, i) => {
      const yamlItem = node.items[i];
      const first = item.kind === 'map' ? item.entries[0] : undefined;
      const beforeDash = first?.comments !== undefined && isMap(yamlItem);
      if (beforeDash) yamlItem.commentBefore = first.comments!.join('\n');
      placeComments(item, yamlItem, beforeDash);
    });
  } else if (raw.kind === 'map' && isMap(node)) {
    raw.entries.forEach((entry, i) => {
      const pair = node.items[i];
      if (!isPair(pair)) return;
      if (entry.comments && !(i === 0 && firstPlaced) && isScalar(pair.key))
        pair.key.commentBefore = entry.comments.join('\n');
      placeComments(entry.value, pair.value);
    });
  }
}

/**
 * The same tree with every accepted alias renamed to the documented property or field, and every
 * value left out written as the value it stands for.
 */
export function canonicalize(root: RawMap, properties: PropertyTable): RawMap {
  const scope = (node: RawNode): RawNode => canonicalScope(node, properties);
  return rawMap(
    root.entries.map((e) => {
      if (e.key === 'global') return { ...e, value: scope(e.value) };
      if (e.key === 'hosts' && e.value.kind === 'list')
        return { ...e, value: rawList(e.value.items.map(scope), e.value.pos) };
      return e;
    }),
    root.pos,
  );
}

/** One scope's mapping, its locations and errorConfig too. */
function canonicalScope(node: RawNode, properties: PropertyTable): RawNode {
  if (node.kind !== 'map') return node;
  const scope = (n: RawNode): RawNode => canonicalScope(n, properties);
  return rawMap(
    node.entries.flatMap((e): RawEntry[] => {
      const key = properties.canonical(e.key);
      const spec = properties.row(key)?.type;
      if (spec?.kind === 'section') {
        // `locations:` without a value holds no blocks.
        if (isNull(e.value)) return [];
        if (e.value.kind === 'list')
          return [{ ...e, key, value: rawList(e.value.items.map(scope), e.value.pos) }];
      }
      return [{ ...e, key, value: spec ? fields(spec, e.value) : e.value }];
    }),
    node.pos,
  );
}

function fields(spec: Spec, node: RawNode): RawNode {
  switch (spec.kind) {
    case 'nullable':
      return fields(spec.of, node);
    case 'union':
      return spec.options.reduce((n, o) => fields(o, n), node);
    case 'list':
      return node.kind === 'list'
        ? rawList(
            node.items.map((i) => fields(spec.of, i)),
            node.pos,
          )
        : node;
    case 'map':
      return node.kind === 'map'
        ? rawMap(
            node.entries.map((e) => ({ ...e, value: fields(spec.values, e.value) })),
            node.pos,
          )
        : node;
    case 'bool':
      return spec.bareMeansTrue && isNull(node) ? scalar(true, node.pos) : node;
    case 'object': {
      if (spec.bareMeansEmpty && isNull(node)) return rawMap([], node.pos);
      if (node.kind !== 'map') return node;
      const rename = (key: string) =>
        Object.entries(spec.fields).find(([, f]) => f.aliases?.includes(key))?.[0] ?? key;
      return rawMap(
        node.entries.map((e) => {
          const key = own(spec.fields, e.key) ? e.key : rename(e.key);
          const field = own(spec.fields, key);
          return { ...e, key, value: field ? fields(field.spec, e.value) : e.value };
        }),
        node.pos,
      );
    }
    default:
      return node;
  }
}

function isNull(node: RawNode): boolean {
  return node.kind === 'scalar' && node.value === null;
}
