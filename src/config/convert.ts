// `portico convert`: one configuration file in the other syntax. It works on the file's own raw
// tree, so `include` lines and `{{env.NAME}}` placeholders are carried over as written; Ferron's
// alternative spellings come out under their documented names, and what YAML wrote without a value
// (`admin:`, `health:`, `locations:`) as what it stands for, since KDL has no null for a block.
import { stringify } from 'yaml';
import { writeKdl } from './kdl-write.js';
import { ALIASES, propertyRow } from './properties.js';
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

export function toKdl(root: RawMap): string {
  return writeKdl(canonicalize(root));
}

export function toYaml(root: RawMap): string {
  return stringify(toPlain(canonicalize(root)), { lineWidth: 0, aliasDuplicateObjects: false });
}

/**
 * The same tree with every accepted alias renamed to the documented property or field, and every
 * value left out written as the value it stands for.
 */
export function canonicalize(root: RawMap): RawMap {
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

function scope(node: RawNode): RawNode {
  if (node.kind !== 'map') return node;
  return rawMap(
    node.entries.flatMap((e): RawEntry[] => {
      const key = ALIASES[e.key] ?? e.key;
      const spec = propertyRow(key)?.type;
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
          const key = spec.fields[e.key] ? e.key : rename(e.key);
          const field = spec.fields[key];
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
