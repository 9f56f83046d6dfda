// The legacy front end: YAML text → raw tree with positions. YAML 1.2 core schema, as Ferron's
// parser reads it (`yes` is a string, not a boolean); anchors and aliases resolve to copies.
import {
  isAlias,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  parseAllDocuments,
  visit,
  type Alias,
  type Document,
  type Node as YamlNode,
  type YAMLMap,
} from 'yaml';
import type { Diagnostics } from './diagnostics.js';
import { rawList, rawMap, scalar, type Pos, type RawEntry, type RawNode } from './raw.js';

export function parseYaml(text: string, file: string, diags: Diagnostics): RawNode | undefined {
  const lines = new LineCounter();
  // The library's own duplicate-key check stops the whole file and compares every key with every
  // other (minutes for a large mapping); duplicates are found below, in one pass, as errors.
  const docs = parseAllDocuments(text, {
    lineCounter: lines,
    intAsBigInt: true,
    uniqueKeys: false,
    prettyErrors: false,
  });
  const at = positions(text, lines, file);
  // A syntax error anywhere fails the file, as in Ferron, whose parser reads every document.
  const errors = 'empty' in docs ? docs.errors : docs.flatMap((d) => d.errors);
  for (const e of errors) diags.error(at(e.pos[0]), '', `YAML syntax: ${firstLine(e.message)}`);
  const [doc, second] = docs;
  // REFERENCE §22: Ferron refuses a file without any document (empty, or only comments), whether
  // it is the main file or an included one. A lone `---` is a document and reads as empty.
  if (!doc) {
    if (errors.length === 0)
      diags.error(
        at(0),
        '',
        'the file holds no YAML document (an empty file is not a configuration; write "global: {}" for all defaults)',
      );
    return undefined;
  }
  if (errors.length > 0) return undefined;
  if (second)
    diags.warn(
      at(second.range[0]),
      '',
      'only the first YAML document is read; this one and any after it are ignored',
    );
  // A document with nothing in it (a lone `---`) has a null scalar written as no text at all.
  const contents = doc.contents;
  if (
    contents === null ||
    (isScalar(contents) && contents.value === null && contents.source === '')
  )
    return rawMap([], at(0));
  const walk: Walk = {
    anchors: anchorsOf(doc),
    at,
    diags,
    copied: 0,
    open: new Set(),
    broken: new Set(),
  };
  try {
    const root = convert(doc.contents, walk, 0, '');
    // A broken alias breaks the file's structure, as a syntax error does (Ferron's parser refuses
    // it): checking the rest would only add errors about the nulls left in its place.
    return walk.broken.size > 0 ? undefined : root;
  } catch (e) {
    if (e instanceof TooManyCopies) return undefined;
    throw e;
  }
}

function firstLine(message: string): string {
  return message.split('\n')[0] ?? message;
}

/**
 * Offsets → positions whose columns count Unicode characters, as KDL's do and editors show: the
 * library counts UTF-16 code units, so a character outside the BMP would count twice.
 */
function positions(
  text: string,
  lines: LineCounter,
  file: string,
): (offset: number | undefined) => Pos {
  const astral: number[] = [];
  for (const m of text.matchAll(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g)) astral.push(m.index);
  return (offset = 0) => {
    const { line, col } = lines.linePos(offset);
    if (astral.length === 0) return { file, line, col };
    const lineStart = lines.lineStarts[line - 1] ?? 0;
    return { file, line, col: col - (lowerBound(astral, offset) - lowerBound(astral, lineStart)) };
  };
}

function lowerBound(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Each alias's target, found in one pass in document order (an anchor may be redefined; an alias
 * means the latest definition before it). The library's own `resolve` walks the whole document
 * for every alias, which made a file of many aliases take minutes.
 */
function anchorsOf(doc: Document): Map<Alias, YamlNode> {
  const current = new Map<string, YamlNode>();
  const targets = new Map<Alias, YamlNode>();
  visit(doc, {
    Node(_, node) {
      if (isAlias(node)) {
        const target = current.get(node.source);
        if (target) targets.set(node, target);
      } else if (node.anchor) {
        current.set(node.anchor, node);
      }
    },
  });
  return targets;
}

// Aliases expand to copies. The bound on copied nodes keeps an alias bomb ("billion laughs") from
// expanding without end; the depth bound keeps the stack safe through chains of aliases.
const MAX_ALIAS_DEPTH = 32;
const MAX_ALIAS_COPIES = 100_000;

class TooManyCopies extends Error {}

interface Walk {
  readonly anchors: Map<Alias, YamlNode>;
  readonly at: (offset: number | undefined) => Pos;
  readonly diags: Diagnostics;
  /** Nodes produced through aliases so far. */
  copied: number;
  /** The anchored collections being read now, to refuse an alias inside its own anchor. */
  readonly open: Set<YamlNode>;
  /** Aliases already reported as unresolvable (an alias inside an anchor is met at each copy). */
  readonly broken: Set<Alias>;
}

/** `path` is the property path in the model (the raw tree has the YAML shape), for messages. */
function convert(node: unknown, walk: Walk, aliasDepth: number, path: string): RawNode {
  const { at, diags } = walk;
  if (isAlias(node)) return expandAlias(node, walk, aliasDepth, path);
  if (aliasDepth > 0 && ++walk.copied > MAX_ALIAS_COPIES) throw new TooManyCopies();
  const pos = at((node as YamlNode).range?.[0]);
  if (isMap(node) || isSeq(node)) {
    if (node.anchor) walk.open.add(node);
    try {
      return isMap(node)
        ? mapping(node, walk, aliasDepth, path, pos)
        : rawList(
            node.items.map((item, i) => convert(item, walk, aliasDepth, `${path}[${i}]`)),
            pos,
          );
    } finally {
      walk.open.delete(node);
    }
  }
  if (isScalar(node)) {
    const v = node.value;
    if (typeof v === 'bigint') return scalar(Number.isSafeInteger(Number(v)) ? Number(v) : v, pos);
    if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')
      return scalar(v, pos);
    diags.error(pos, path, `unsupported YAML value ${JSON.stringify(String(v))}`);
    return scalar(null, pos);
  }
  diags.error(pos, path, 'unsupported YAML node');
  return scalar(null, pos);
}

function mapping(node: YAMLMap, walk: Walk, aliasDepth: number, path: string, pos: Pos): RawNode {
  const { at, diags } = walk;
  const entries: RawEntry[] = [];
  const seen = new Map<string, Pos>();
  for (const pair of node.items) {
    const key = isScalar(pair.key) ? pair.key.value : pair.key;
    const keyPos = at((pair.key as YamlNode | null)?.range?.[0]);
    if (typeof key !== 'string' && typeof key !== 'number' && typeof key !== 'bigint') {
      diags.error(keyPos, path, 'a mapping key must be a plain name');
      continue;
    }
    const name = String(key);
    const keyPath = path ? `${path}.${name}` : name;
    const first = seen.get(name);
    if (first) {
      // Reported and dropped here, so the rest of the file is still checked.
      diags.error(keyPos, keyPath, `set twice (first at ${first.line}:${first.col})`);
      continue;
    }
    seen.set(name, keyPos);
    const value =
      pair.value === null ? scalar(null, keyPos) : convert(pair.value, walk, aliasDepth, keyPath);
    entries.push({ key: name, keyPos, value });
  }
  return rawMap(entries, pos);
}

function expandAlias(node: Alias, walk: Walk, aliasDepth: number, path: string): RawNode {
  const pos = walk.at(node.range?.[0]);
  const target = walk.anchors.get(node);
  const problem = !target
    ? `no anchor &${node.source} before it`
    : walk.open.has(target)
      ? `it is inside its own anchor &${node.source}`
      : aliasDepth >= MAX_ALIAS_DEPTH
        ? `aliases nest more than ${MAX_ALIAS_DEPTH} deep`
        : undefined;
  if (problem || !target) {
    if (!walk.broken.has(node))
      walk.diags.error(pos, path, `YAML alias *${node.source} cannot be resolved: ${problem}`);
    walk.broken.add(node);
    return scalar(null, pos);
  }
  try {
    return convert(target, walk, aliasDepth + 1, path);
  } catch (e) {
    // Named once, at the alias written in the file whose expansion crossed the bound.
    if (e instanceof TooManyCopies && aliasDepth === 0) {
      walk.diags.error(
        pos,
        path,
        `YAML aliases expand to more than ${MAX_ALIAS_COPIES} nodes by this *${node.source}; refusing the file (a guard against alias bombs)`,
      );
    }
    throw e;
  }
}
