// The legacy front end: YAML text → raw tree with positions. YAML 1.2 core schema, as Ferron's
// parser reads it (`yes` is a string, not a boolean); anchors and aliases resolve to copies.
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node as YamlNode } from 'yaml';
import type { Diagnostics } from './diagnostics.js';
import { rawList, rawMap, scalar, type Pos, type RawEntry, type RawNode } from './raw.js';

export function parseYaml(text: string, file: string, diags: Diagnostics): RawNode | undefined {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, intAsBigInt: true, uniqueKeys: true, prettyErrors: false });
  const at = (offset: number | undefined): Pos => {
    const { line, col } = lines.linePos(offset ?? 0);
    return { file, line, col };
  };
  for (const e of doc.errors) diags.error(at(e.pos[0]), '', `YAML syntax: ${firstLine(e.message)}`);
  if (doc.errors.length > 0) return undefined;
  if (doc.contents === null) return rawMap([], at(0));
  return convert(doc.contents, { doc, at, diags, expanded: 0 }, 0);
}

function firstLine(message: string): string {
  return message.split('\n')[0] ?? message;
}

// Aliases expand to copies; bounds keep a "billion laughs" file from expanding without end.
const MAX_ALIAS_DEPTH = 32;
const MAX_ALIAS_EXPANSIONS = 10_000;

interface Walk {
  readonly doc: Document;
  readonly at: (offset: number | undefined) => Pos;
  readonly diags: Diagnostics;
  expanded: number;
}

function convert(node: unknown, walk: Walk, aliasDepth: number): RawNode {
  const { at, diags } = walk;
  if (isAlias(node)) {
    const target = node.resolve(walk.doc);
    walk.expanded++;
    if (!target || aliasDepth >= MAX_ALIAS_DEPTH || walk.expanded > MAX_ALIAS_EXPANSIONS) {
      diags.error(at(node.range?.[0]), '', `YAML alias *${node.source} cannot be resolved (unknown, or expands too far)`);
      return scalar(null, at(node.range?.[0]));
    }
    return convert(target, walk, aliasDepth + 1);
  }
  const pos = at((node as YamlNode).range?.[0]);
  if (isMap(node)) {
    const entries: RawEntry[] = [];
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? pair.key.value : pair.key;
      const keyPos = at((pair.key as YamlNode | null)?.range?.[0]);
      if (typeof key !== 'string' && typeof key !== 'number' && typeof key !== 'bigint') {
        diags.error(keyPos, '', 'a mapping key must be a plain name');
        continue;
      }
      const value = pair.value === null ? scalar(null, keyPos) : convert(pair.value, walk, aliasDepth);
      entries.push({ key: String(key), keyPos, value });
    }
    return rawMap(entries, pos);
  }
  if (isSeq(node)) return rawList(node.items.map((item) => convert(item, walk, aliasDepth)), pos);
  if (isScalar(node)) {
    const v = node.value;
    if (typeof v === 'bigint') return scalar(Number.isSafeInteger(Number(v)) ? Number(v) : v, pos);
    if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return scalar(v, pos);
    diags.error(pos, '', `unsupported YAML value ${JSON.stringify(String(v))}`);
    return scalar(null, pos);
  }
  diags.error(pos, '', 'unsupported YAML node');
  return scalar(null, pos);
}
