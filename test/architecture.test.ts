// ARCHITECTURE.md, "Folders": imports between the top-level folders of src/ point one way. This
// reads every import (type-only and dynamic ones too) and fails on a cycle between folders, or on
// a folder at the bottom importing one above it.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { it } from 'node:test';

const SRC = resolve(import.meta.dirname, '../src');
const IMPORT =
  /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)|(?:^|\n)\s*import\s*['"](\.[^'"]+)['"]/g;
// What the folders at the bottom may import: nothing above them.
const BOTTOM: Record<string, readonly string[]> = {
  store: [],
  auth: ['store'],
  log: [],
  config: ['auth'],
  http: ['config'],
};

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** folder → the folders its files import, with one file that does each. */
function folderGraph(): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>();
  for (const file of files(SRC)) {
    const from = relative(SRC, file).split(sep);
    if (from.length < 2) continue;
    for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const to = relative(SRC, resolve(dirname(file), m[1] ?? m[2] ?? m[3]!)).split(sep);
      if (to.length < 2 || to[0] === '..' || to[0] === from[0]) continue;
      if (!graph.has(from[0]!)) graph.set(from[0]!, new Map());
      graph.get(from[0]!)!.set(to[0]!, relative(SRC, file));
    }
  }
  return graph;
}

it('no two folders of src/ import each other, directly or around a cycle', () => {
  const graph = folderGraph();
  const path = (from: string, to: string, seen = new Set<string>()): string[] | undefined => {
    for (const next of graph.get(from)?.keys() ?? []) {
      if (next === to) return [from, to];
      if (seen.has(next)) continue;
      seen.add(next);
      const rest = path(next, to, seen);
      if (rest) return [from, ...rest];
    }
    return undefined;
  };
  const cycles = [...graph.keys()].flatMap((folder) => {
    const cycle = path(folder, folder);
    return cycle
      ? [
          cycle
            .map((f, i) =>
              i < cycle.length - 1 ? `${f} (${graph.get(f)!.get(cycle[i + 1]!)})` : f,
            )
            .join(' → '),
        ]
      : [];
  });
  assert.deepEqual(cycles, []);
});

it('the folders at the bottom import nothing above them', () => {
  const graph = folderGraph();
  const wrong = Object.entries(BOTTOM).flatMap(([folder, allowed]) =>
    [...(graph.get(folder) ?? [])]
      .filter(([to]) => !allowed.includes(to))
      .map(([to, file]) => `${file} imports ${to}/`),
  );
  assert.deepEqual(wrong, []);
});
