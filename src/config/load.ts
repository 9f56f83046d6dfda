// Files → raw tree → Config. Reads the main file by its extension, resolves `include` globs
// relative to the including file, merges included files (their hosts after the includer's, their
// global keys under it), interpolates `{{env.NAME}}`, then validates.
import { readFile, realpath } from 'node:fs/promises';
import { dirname, extname, isAbsolute, relative, resolve } from 'node:path';
import { glob } from 'tinyglobby';
import { Diagnostics, type Diagnostic } from './diagnostics.js';
import { parseKdl } from './kdl.js';
import { entryOf, rawList, rawMap, stringScalars, type Pos, type RawEntry, type RawMap, type RawNode } from './raw.js';
import { validate, type Config } from './validate.js';
import { parseYaml } from './yaml.js';
import { didYouMean } from './suggest.js';

export interface LoadOptions {
  /** Environment for `{{env.NAME}}`; process.env when absent. */
  readonly env?: NodeJS.ProcessEnv;
  /** Keep placeholders instead of reading the environment (`convert`). */
  readonly keepPlaceholders?: boolean;
  /** Resolve includes (default true; `convert` works on one file). */
  readonly includes?: boolean;
  /** Paths in messages are shown relative to this directory (default: the working directory). */
  readonly cwd?: string;
}

export interface LoadResult {
  /** Present when there is no error. */
  readonly config: Config | undefined;
  readonly diagnostics: readonly Diagnostic[];
  /** Every file read, the main one first (absolute paths). */
  readonly files: readonly string[];
  /** The merged raw tree (for `convert`); undefined when the files could not be parsed. */
  readonly raw: RawMap | undefined;
}

export type Syntax = 'yaml' | 'kdl';

export function syntaxOf(file: string): Syntax | undefined {
  const ext = extname(file).toLowerCase();
  return ext === '.kdl' ? 'kdl' : ext === '.yaml' || ext === '.yml' ? 'yaml' : undefined;
}

/** Parses text of one syntax into a raw tree; `file` is the name used in messages. */
export function parseText(text: string, syntax: Syntax, file: string, diags: Diagnostics): RawNode | undefined {
  return syntax === 'kdl' ? parseKdl(text, file, diags) : parseYaml(text, file, diags);
}

export async function loadConfig(file: string, options: LoadOptions = {}): Promise<LoadResult> {
  const diags = new Diagnostics();
  const reader = new TreeReader(diags, options.cwd ?? process.cwd(), options.includes ?? true);
  const raw = await reader.read(resolve(options.cwd ?? process.cwd(), file), [], undefined);
  if (!raw) return { config: undefined, diagnostics: sorted(diags), files: reader.files, raw };
  // Validation runs even after other errors, so one run reports everything that needs fixing.
  if (!options.keepPlaceholders) interpolate(raw, options.env ?? process.env, diags);
  const config = validate(raw, diags, {
    placeholders: options.keepPlaceholders ?? false,
    ...(options.keepPlaceholders ? {} : { baseDir: (shown: string) => reader.dirOf(shown) }),
  });
  return { config, diagnostics: sorted(diags), files: reader.files, raw };
}

/** Loads configuration text that is not in a file (the built-in default, tests); relative paths are relative to `baseDir`. */
export function loadConfigText(text: string, syntax: Syntax, label: string, env: NodeJS.ProcessEnv = process.env, baseDir = process.cwd()): LoadResult {
  const diags = new Diagnostics();
  const raw = parseText(text, syntax, label, diags);
  if (!raw || raw.kind !== 'map') return { config: undefined, diagnostics: diags.list, files: [], raw: undefined };
  interpolate(raw, env, diags);
  const config = validate(raw, diags, { baseDir: () => baseDir });
  return { config, diagnostics: sorted(diags), files: [], raw };
}

/** Diagnostics grouped by file (in the order files were first named), then by position. */
function sorted(diags: Diagnostics): Diagnostic[] {
  const order = new Map<string, number>();
  for (const d of diags.list) if (!order.has(d.pos.file)) order.set(d.pos.file, order.size);
  return [...diags.list].sort(
    (a, b) => order.get(a.pos.file)! - order.get(b.pos.file)! || a.pos.line - b.pos.line || a.pos.col - b.pos.col,
  );
}

const ENV_PLACEHOLDER = /\{\{\s*env\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

export function interpolate(root: RawNode, env: NodeJS.ProcessEnv, diags: Diagnostics): void {
  for (const node of stringScalars(root)) {
    const text = node.value as string;
    if (!text.includes('{{')) continue;
    node.value = text.replace(ENV_PLACEHOLDER, (whole, name: string) => {
      const value = env[name];
      if (value === undefined) {
        diags.error(node.pos, '', `environment variable ${name} is not set (used as ${whole})`);
        return whole;
      }
      return value;
    });
  }
}

class TreeReader {
  readonly files: string[] = [];
  /** Each file's directory, by the name positions use. */
  private readonly dirs = new Map<string, string>();

  constructor(
    readonly diags: Diagnostics,
    readonly cwd: string,
    readonly followIncludes: boolean,
  ) {}

  dirOf(shown: string): string {
    return this.dirs.get(shown) ?? this.cwd;
  }

  display(file: string): string {
    const rel = relative(this.cwd, file);
    return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : file;
  }

  /** One file and, recursively, what it includes; `chain` holds the real paths of the includers. */
  async read(file: string, chain: readonly string[], includedAt: Pos | undefined): Promise<RawMap | undefined> {
    const shown = this.display(file);
    const where = includedAt ?? { file: shown, line: 1, col: 1 };
    const syntax = syntaxOf(file);
    if (!syntax) {
      this.diags.error(where, '', `${shown}: unsupported configuration file type (use .yaml, .yml or .kdl)`);
      return undefined;
    }
    let text: string;
    let real: string;
    try {
      real = await realpath(file);
      text = await readFile(real, 'utf8');
    } catch (e) {
      const via = chain.length > 0 ? ` (included via ${[...chain, file].map((f) => this.display(f)).join(' → ')})` : '';
      this.diags.error(where, '', `cannot read ${shown}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}${via}`);
      return undefined;
    }
    if (chain.includes(real)) {
      this.diags.error(where, 'include', `include cycle: ${[...chain, real].map((f) => this.display(f)).join(' → ')}`);
      return undefined;
    }
    this.files.push(real);
    this.dirs.set(shown, dirname(file));
    const root = parseText(text, syntax, shown, this.diags);
    if (!root) return undefined;
    if (root.kind !== 'map') {
      this.diags.error(root.pos, '', 'expected a mapping with "global", "hosts" and "include"');
      return undefined;
    }
    const include = entryOf(root, 'include');
    if (!include || !this.followIncludes) return root;
    const patterns = this.patterns(include);
    const merged = withoutEntry(root, 'include');
    const included: RawMap[] = [];
    for (const p of patterns) {
      const matches = await this.expand(p.pattern, dirname(real), p.pos);
      for (const match of matches) {
        const sub = await this.read(match, [...chain, real], p.pos);
        if (sub) included.push(sub);
      }
    }
    return mergeIncluded(merged, included, this.diags);
  }

  patterns(include: RawEntry): { pattern: string; pos: Pos }[] {
    const items = include.value.kind === 'list' ? include.value.items : [include.value];
    return items.flatMap((item) => {
      if (item.kind === 'scalar' && typeof item.value === 'string' && item.value.length > 0) return [{ pattern: item.value, pos: item.pos }];
      if (item.kind === 'scalar' && item.value === null) return [];
      this.diags.error(item.pos, 'include', 'expected a glob pattern string');
      return [];
    });
  }

  async expand(pattern: string, base: string, pos: Pos): Promise<string[]> {
    try {
      // Absolute patterns are split so the glob runs from their fixed directory.
      const cwd = isAbsolute(pattern) ? '/' : base;
      const relativePattern = isAbsolute(pattern) ? pattern.slice(1) : pattern;
      const found = await glob(relativePattern, { cwd, absolute: true, onlyFiles: true, dot: false, expandDirectories: false });
      return found.sort();
    } catch (e) {
      this.diags.error(pos, 'include', `invalid glob ${JSON.stringify(pattern)}: ${(e as Error).message}`);
      return [];
    }
  }
}

function withoutEntry(map: RawMap, key: string): RawMap {
  return rawMap(
    map.entries.filter((e) => e.key !== key),
    map.pos,
  );
}

/**
 * CONTRACT.md: included hosts follow the includer's; included `global` keys merge under the
 * includer's (the includer wins; among included files the later one wins, as drop-in files do).
 */
function mergeIncluded(root: RawMap, included: readonly RawMap[], diags: Diagnostics): RawMap {
  if (included.length === 0) return root;
  const globalEntry = entryOf(root, 'global');
  const ownGlobal = globalEntry?.value.kind === 'map' ? globalEntry.value : undefined;
  const globalKeys = new Map<string, RawEntry>();
  for (const sub of included) {
    for (const e of sub.entries) {
      if (e.key !== 'global' && e.key !== 'hosts') {
        diags.error(e.keyPos, e.key, `unknown top-level key${didYouMean(e.key, ['global', 'hosts', 'include'])} (expected global, hosts or include)`);
      }
    }
    const g = entryOf(sub, 'global')?.value;
    if (g?.kind === 'map') for (const e of g.entries) globalKeys.set(e.key, e);
  }
  for (const e of ownGlobal?.entries ?? []) {
    const shadowed = globalKeys.get(e.key);
    if (shadowed) {
      diags.warn(shadowed.keyPos, `global.${e.key}`, `overridden by ${e.keyPos.file}:${e.keyPos.line}:${e.keyPos.col}`);
    }
    globalKeys.set(e.key, e);
  }
  const hostsEntry = entryOf(root, 'hosts');
  const hosts: RawNode[] = hostsEntry?.value.kind === 'list' ? [...hostsEntry.value.items] : [];
  for (const sub of included) {
    const h = entryOf(sub, 'hosts')?.value;
    if (h?.kind === 'list') hosts.push(...h.items);
    else if (h && !(h.kind === 'scalar' && h.value === null)) diags.error(h.pos, 'hosts', 'expected a list of hosts');
  }
  const entries: RawEntry[] = root.entries.filter((e) => e.key !== 'global' && e.key !== 'hosts');
  const globalPos = globalEntry?.keyPos ?? root.pos;
  if (globalKeys.size > 0 || globalEntry) {
    entries.unshift({ key: 'global', keyPos: globalPos, value: rawMap([...globalKeys.values()], ownGlobal?.pos ?? globalPos) });
  }
  if (hosts.length > 0 || hostsEntry) {
    const pos = hostsEntry?.keyPos ?? hosts[0]?.pos ?? root.pos;
    entries.push({ key: 'hosts', keyPos: pos, value: rawList(hosts, hostsEntry?.value.pos ?? pos) });
  }
  return rawMap(entries, root.pos);
}
