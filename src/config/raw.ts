// The raw tree: what either syntax parses into, before validation. It has the YAML shape
// (`global`, `hosts`, `include`) and every node remembers where it was written, so every later
// message can name FILE:LINE:COL whatever the syntax.

export interface Pos {
  readonly file: string;
  readonly line: number;
  readonly col: number;
}

export type RawScalarValue = string | number | bigint | boolean | null;

export interface RawScalar {
  readonly kind: 'scalar';
  value: RawScalarValue;
  readonly pos: Pos;
}

export interface RawList {
  readonly kind: 'list';
  readonly items: RawNode[];
  readonly pos: Pos;
}

export interface RawEntry {
  readonly key: string;
  readonly keyPos: Pos;
  value: RawNode;
  /** The comments written before it (or after it on its line), for `convert`. */
  comments?: string[];
}

export interface RawMap {
  readonly kind: 'map';
  readonly entries: RawEntry[];
  readonly pos: Pos;
}

export type RawNode = RawScalar | RawList | RawMap;

export const scalar = (value: RawScalarValue, pos: Pos): RawScalar => ({
  kind: 'scalar',
  value,
  pos,
});
export const rawList = (items: RawNode[], pos: Pos): RawList => ({ kind: 'list', items, pos });
export const rawMap = (entries: RawEntry[], pos: Pos): RawMap => ({ kind: 'map', entries, pos });

export function entryOf(map: RawMap, key: string): RawEntry | undefined {
  return map.entries.find((e) => e.key === key);
}

/** Plain JavaScript data (for YAML output and tests); positions are dropped. */
export function toPlain(node: RawNode): unknown {
  switch (node.kind) {
    case 'scalar':
      return node.value;
    case 'list':
      return node.items.map(toPlain);
    case 'map':
      return Object.fromEntries(node.entries.map((e) => [e.key, toPlain(e.value)]));
  }
}

/** Every string scalar of a tree, for passes such as `{{env.NAME}}` interpolation. */
export function* stringScalars(node: RawNode): Generator<RawScalar> {
  if (node.kind === 'scalar') {
    if (typeof node.value === 'string') yield node;
  } else if (node.kind === 'list') {
    for (const item of node.items) yield* stringScalars(item);
  } else {
    for (const e of node.entries) yield* stringScalars(e.value);
  }
}
