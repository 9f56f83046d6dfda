// What reading `include`s needs besides the files: the glob's view of the file system, which
// reports what it cannot read, and the merge of included files into the includer's tree.
import { readdir, realpath as realpathCallback, stat, type Stats } from 'node:fs';
import type { Diagnostics } from './diagnostics.js';
import { inWords } from './system-errors.js';
import { entryOf, rawList, rawMap, type RawEntry, type RawMap, type RawNode } from './raw.js';
import { didYouMean } from './suggest.js';

/**
 * The file system as the glob library sees it, with the errors it would swallow made visible: a
 * directory that cannot be read is reported (one that does not exist just matches nothing), and
 * a symbolic link that leads nowhere is passed on as a file, so that reading it names the problem.
 */
export function reportingFs(unreadable: (dir: string, code: string) => void) {
  const missing = new Set(['ENOENT', 'ENOTDIR']);
  return {
    readdir: ((
      dir: string,
      options: { withFileTypes: true },
      done: (e: NodeJS.ErrnoException | null, entries?: unknown) => void,
    ) => {
      readdir(dir, options, (e, entries) => {
        if (e && !missing.has(e.code ?? '')) unreadable(dir.replace(/\/$/, '') || '/', inWords(e));
        done(e, entries);
      });
    }) as unknown as typeof readdir,
    realpath: ((
      path: string,
      done: (e: NodeJS.ErrnoException | null, resolved?: string) => void,
    ) => {
      realpathCallback(path, (e, resolved) => done(null, e ? path : resolved));
    }) as unknown as typeof realpathCallback,
    stat: ((
      path: string,
      done: (e: NodeJS.ErrnoException | null, stats?: Stats | { isDirectory(): boolean }) => void,
    ) => {
      stat(path, (e, stats) => done(null, e ? { isDirectory: () => false } : stats));
    }) as unknown as typeof stat,
  };
}

export function withoutEntry(map: RawMap, key: string): RawMap {
  return rawMap(
    map.entries.filter((e) => e.key !== key),
    map.pos,
  );
}

/**
 * CONTRACT.md: included hosts follow the includer's; included `global` keys merge under the
 * includer's (the includer wins; among included files the later one wins, as drop-in files do).
 * A `global` or `hosts` of the wrong shape is refused wherever it is written; the includer's own
 * is kept as written, so validation names it.
 */
export function mergeIncluded(
  root: RawMap,
  included: readonly RawMap[],
  diags: Diagnostics,
): RawMap {
  if (included.length === 0) return root;
  const globalEntry = entryOf(root, 'global');
  const hostsEntry = entryOf(root, 'hosts');
  const globalKeys = new Map<string, RawEntry>();
  const hosts: RawNode[] = [];
  for (const sub of included) {
    for (const e of sub.entries) {
      if (e.key !== 'global' && e.key !== 'hosts') {
        diags.warn(
          e.keyPos,
          e.key,
          `unknown top-level key, ignored${didYouMean(e.key, ['global', 'hosts', 'include'])} (expected global, hosts or include)`,
        );
      }
    }
    const g = entryOf(sub, 'global')?.value;
    if (g?.kind === 'map') for (const e of g.entries) globalKeys.set(e.key, e);
    else if (g && !isNull(g))
      diags.error(g.pos, 'global', `expected a mapping of properties, got ${described(g)}`);
    const h = entryOf(sub, 'hosts')?.value;
    if (h?.kind === 'list') hosts.push(...h.items);
    else if (h && !isNull(h))
      diags.error(h.pos, 'hosts', `expected a list of hosts, got ${described(h)}`);
  }
  const entries: RawEntry[] = root.entries.filter((e) => e.key !== 'global' && e.key !== 'hosts');
  if (globalEntry && globalEntry.value.kind !== 'map' && !isNull(globalEntry.value)) {
    entries.unshift(globalEntry);
  } else if (globalKeys.size > 0 || globalEntry) {
    const ownGlobal = globalEntry?.value.kind === 'map' ? globalEntry.value : undefined;
    for (const e of ownGlobal?.entries ?? []) {
      const shadowed = globalKeys.get(e.key);
      if (shadowed) {
        diags.warn(
          shadowed.keyPos,
          `global.${e.key}`,
          `overridden by ${e.keyPos.file}:${e.keyPos.line}:${e.keyPos.col}`,
        );
      }
      globalKeys.set(e.key, e);
    }
    const globalPos = globalEntry?.keyPos ?? root.pos;
    entries.unshift({
      key: 'global',
      keyPos: globalPos,
      value: rawMap([...globalKeys.values()], ownGlobal?.pos ?? globalPos),
    });
  }
  if (hostsEntry && hostsEntry.value.kind !== 'list' && !isNull(hostsEntry.value)) {
    entries.push(hostsEntry);
  } else if (hosts.length > 0 || hostsEntry) {
    const own = hostsEntry?.value.kind === 'list' ? hostsEntry.value.items : [];
    const pos = hostsEntry?.keyPos ?? hosts[0]?.pos ?? root.pos;
    entries.push({
      key: 'hosts',
      keyPos: pos,
      value: rawList([...own, ...hosts], hostsEntry?.value.pos ?? pos),
    });
  }
  return rawMap(entries, root.pos);
}

function isNull(node: RawNode): boolean {
  return node.kind === 'scalar' && node.value === null;
}

/** What a node is, in the words the validator uses. */
function described(node: RawNode): string {
  if (node.kind !== 'scalar') return node.kind === 'list' ? 'a list' : 'a mapping';
  return typeof node.value === 'string' ? JSON.stringify(node.value) : String(node.value);
}
