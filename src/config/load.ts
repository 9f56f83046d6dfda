// Files → raw tree → Config. Reads the main file by its extension (UTF-8 only), resolves `include`
// globs relative to the including file (`{{env.NAME}}` in them first), merges included files (their
// hosts after the includer's, their global keys under it), interpolates `{{env.NAME}}`, then validates.
import { readdir, realpath as realpathCallback, stat, type Stats } from 'node:fs';
import { readFile, realpath } from 'node:fs/promises';
import { dirname, extname, isAbsolute, relative, resolve } from 'node:path';
import { glob, isDynamicPattern } from 'tinyglobby';
import type { ConfigCheck } from './checks.js';
import { Diagnostics, type Diagnostic } from './diagnostics.js';
import { parseKdl } from './kdl.js';
import {
  entryOf,
  rawList,
  rawMap,
  stringScalars,
  type Pos,
  type RawEntry,
  type RawMap,
  type RawNode,
} from './raw.js';
import { validate, type Config } from './validate.js';
import { parseYaml } from './yaml.js';
import { didYouMean } from './suggest.js';
import { inWords } from './system-errors.js';

export interface LoadOptions {
  /** Environment for `{{env.NAME}}`; process.env when absent. */
  readonly env?: NodeJS.ProcessEnv;
  /** Keep placeholders instead of reading the environment (`convert`). */
  readonly keepPlaceholders?: boolean;
  /** Resolve includes (default true; `convert` works on one file). */
  readonly includes?: boolean;
  /** Paths in messages are shown relative to this directory (default: the working directory). */
  readonly cwd?: string;
  /** Checks of the layers above (certificate files, modules): server/config-checks.ts has them. */
  readonly checks?: readonly ConfigCheck[];
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
export function parseText(
  text: string,
  syntax: Syntax,
  file: string,
  diags: Diagnostics,
): RawNode | undefined {
  // A UTF-8 byte order mark is no part of the configuration, and would shift line 1's columns.
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  return syntax === 'kdl' ? parseKdl(body, file, diags) : parseYaml(body, file, diags);
}

export async function loadConfig(file: string, options: LoadOptions = {}): Promise<LoadResult> {
  const diags = new Diagnostics();
  const env = options.env ?? process.env;
  const reader = new TreeReader(
    diags,
    options.cwd ?? process.cwd(),
    options.includes ?? true,
    env,
    options.keepPlaceholders ?? false,
  );
  const raw = await reader.read(resolve(options.cwd ?? process.cwd(), file), [], undefined);
  if (!raw) return { config: undefined, diagnostics: sorted(diags), files: reader.files, raw };
  // Validation runs even after other errors, so one run reports everything that needs fixing.
  if (!options.keepPlaceholders) interpolate(raw, env, diags);
  const config = validate(raw, diags, {
    placeholders: options.keepPlaceholders ?? false,
    ...(options.checks ? { checks: options.checks } : {}),
    ...(options.keepPlaceholders ? {} : { baseDir: (shown: string) => reader.dirOf(shown) }),
  });
  return { config, diagnostics: sorted(diags), files: reader.files, raw };
}

/** Loads configuration text that is not in a file (the built-in default, tests); relative paths are relative to `baseDir`. */
export function loadConfigText(
  text: string,
  syntax: Syntax,
  label: string,
  {
    env = process.env,
    baseDir = process.cwd(),
    checks = [],
  }: { env?: NodeJS.ProcessEnv; baseDir?: string; checks?: readonly ConfigCheck[] } = {},
): LoadResult {
  const diags = new Diagnostics();
  const raw = parseText(text, syntax, label, diags);
  if (!raw) return { config: undefined, diagnostics: diags.list, files: [], raw: undefined };
  interpolate(raw, env, diags);
  // A text that is not a mapping (a lone scalar or list) is refused by the validator, with a message.
  const config = validate(raw, diags, { baseDir: () => baseDir, checks });
  return {
    config,
    diagnostics: sorted(diags),
    files: [],
    raw: raw.kind === 'map' ? raw : undefined,
  };
}

/** Diagnostics grouped by file (in the order files were first named), then by position. */
function sorted(diags: Diagnostics): Diagnostic[] {
  const order = new Map<string, number>();
  for (const d of diags.list) if (!order.has(d.pos.file)) order.set(d.pos.file, order.size);
  return [...diags.list].sort(
    (a, b) =>
      order.get(a.pos.file)! - order.get(b.pos.file)! ||
      a.pos.line - b.pos.line ||
      a.pos.col - b.pos.col,
  );
}

const ENV_PLACEHOLDER = /\{\{\s*env\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/** `{{env.NAME}}` in one string replaced; `missing` hears of each unset name (it stays as written). */
function substitute(
  text: string,
  env: NodeJS.ProcessEnv,
  missing: (name: string, whole: string) => void,
): string {
  if (!text.includes('{{')) return text;
  return text.replace(ENV_PLACEHOLDER, (whole, name: string) => {
    const value = env[name];
    if (value === undefined) missing(name, whole);
    return value ?? whole;
  });
}

export function interpolate(root: RawNode, env: NodeJS.ProcessEnv, diags: Diagnostics): void {
  let paths: Map<RawNode, string> | undefined;
  for (const node of stringScalars(root)) {
    node.value = substitute(node.value as string, env, (name, whole) => {
      paths ??= pathsOf(root);
      diags.error(
        node.pos,
        paths.get(node) ?? '',
        `environment variable ${name} is not set (used as ${whole})`,
      );
    });
  }
}

/** Every node's model path (the raw tree has the YAML shape), worked out only when a message needs one. */
function pathsOf(
  node: RawNode,
  path = '',
  into = new Map<RawNode, string>(),
): Map<RawNode, string> {
  into.set(node, path);
  if (node.kind === 'list') node.items.forEach((item, i) => pathsOf(item, `${path}[${i}]`, into));
  else if (node.kind === 'map')
    for (const e of node.entries) pathsOf(e.value, path ? `${path}.${e.key}` : e.key, into);
  return into;
}

/**
 * File bytes → text. Node's own decoding would turn bytes that are not UTF-8 into U+FFFD without a
 * word, so a Latin-1 path would be served as something else; such a file is refused with the
 * position of the first bad byte. A UTF-8 byte order mark is dropped.
 */
function decodeUtf8(bytes: Uint8Array, file: string, diags: Diagnostics): string | undefined {
  const bom = foreignByteOrderMark(bytes);
  if (bom) {
    diags.error(
      { file, line: 1, col: 1 },
      '',
      `the file is ${bom} (it starts with that byte order mark); save it as UTF-8`,
    );
    return undefined;
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    const offset = firstInvalidUtf8(bytes);
    diags.error(
      bytePosition(bytes, offset, file),
      '',
      `not valid UTF-8 (byte 0x${bytes[offset]!.toString(16).toUpperCase().padStart(2, '0')}); save the file as UTF-8`,
    );
    return undefined;
  }
  // Valid UTF-8, yet no configuration holds a NUL: this is UTF-16 or UTF-32 without a byte order mark.
  const nul = bytes.indexOf(0);
  if (nul >= 0) {
    diags.error(
      bytePosition(bytes, nul, file),
      '',
      'a NUL byte; is the file UTF-16 without a byte order mark? save it as UTF-8',
    );
    return undefined;
  }
  return text;
}

function foreignByteOrderMark(b: Uint8Array): string | undefined {
  const starts = (...mark: number[]) => mark.every((m, i) => b[i] === m);
  if (starts(0xff, 0xfe, 0, 0)) return 'UTF-32LE';
  if (starts(0, 0, 0xfe, 0xff)) return 'UTF-32BE';
  if (starts(0xff, 0xfe)) return 'UTF-16LE';
  if (starts(0xfe, 0xff)) return 'UTF-16BE';
  return undefined;
}

/** The offset of the first byte that does not start a well-formed UTF-8 sequence (RFC 3629). */
function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0;
  while (i < b.length) {
    const c = b[i]!;
    const extra =
      c < 0x80
        ? 0
        : c >= 0xc2 && c <= 0xdf
          ? 1
          : c >= 0xe0 && c <= 0xef
            ? 2
            : c >= 0xf0 && c <= 0xf4
              ? 3
              : -1;
    if (extra < 0) return i;
    // The second byte's range excludes overlong forms, surrogates and code points above U+10FFFF.
    const low = c === 0xe0 ? 0xa0 : c === 0xf0 ? 0x90 : 0x80;
    const high = c === 0xed ? 0x9f : c === 0xf4 ? 0x8f : 0xbf;
    for (let k = 1; k <= extra; k++) {
      const next = b[i + k];
      if (next === undefined || next < (k === 1 ? low : 0x80) || next > (k === 1 ? high : 0xbf))
        return i;
    }
    i += extra + 1;
  }
  return b.length;
}

/** Line and column (in characters) of a byte offset whose preceding bytes are valid UTF-8. */
function bytePosition(bytes: Uint8Array, offset: number, file: string): Pos {
  let line = 1;
  let lineStart = 0;
  for (let i = bytes.indexOf(0x0a); i >= 0 && i < offset; i = bytes.indexOf(0x0a, i + 1)) {
    line++;
    lineStart = i + 1;
  }
  const before = new TextDecoder('utf-8').decode(bytes.subarray(lineStart, offset));
  return { file, line, col: [...before].length + 1 };
}

class TreeReader {
  readonly files: string[] = [];
  /** Each file's directory, by the name positions use. */
  private readonly dirs = new Map<string, string>();
  /** How each file read so far was reached (real paths, the main file first), to name both ways in. */
  private readonly reachedVia = new Map<string, readonly string[]>();

  constructor(
    readonly diags: Diagnostics,
    readonly cwd: string,
    readonly followIncludes: boolean,
    readonly env: NodeJS.ProcessEnv,
    readonly keepPlaceholders: boolean,
  ) {}

  dirOf(shown: string): string {
    return this.dirs.get(shown) ?? this.cwd;
  }

  display(file: string): string {
    const rel = relative(this.cwd, file);
    return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : file;
  }

  chainText(files: readonly string[]): string {
    return files.map((f) => this.display(f)).join(' → ');
  }

  /** One file and, recursively, what it includes; `chain` holds the real paths of the includers. */
  async read(
    file: string,
    chain: readonly string[],
    includedAt: Pos | undefined,
  ): Promise<RawMap | undefined> {
    const shown = this.display(file);
    const where = includedAt ?? { file: shown, line: 1, col: 1 };
    const syntax = syntaxOf(file);
    if (!syntax) {
      this.diags.error(
        where,
        '',
        `${shown}: unsupported configuration file type (use .yaml, .yml or .kdl)`,
      );
      return undefined;
    }
    let bytes: Buffer;
    let real: string;
    try {
      real = await realpath(file);
      bytes = await readFile(real);
    } catch (e) {
      const via = chain.length > 0 ? ` (included via ${this.chainText([...chain, file])})` : '';
      this.diags.error(where, '', `cannot read ${shown}: ${inWords(e)}${via}`);
      return undefined;
    }
    if (chain.includes(real)) {
      this.diags.error(where, 'include', `include cycle: ${this.chainText([...chain, real])}`);
      return undefined;
    }
    // REFERENCE §22: Ferron refuses a file reached twice as an include loop; merging it twice
    // would add its hosts twice and make its global keys override themselves.
    const earlier = this.reachedVia.get(real);
    if (earlier) {
      this.diags.error(
        where,
        'include',
        `${shown} is included twice: ${this.chainText(earlier)}, and ${this.chainText([...chain, real])}`,
      );
      return undefined;
    }
    this.reachedVia.set(real, [...chain, real]);
    this.files.push(real);
    this.dirs.set(shown, dirname(file));
    const text = decodeUtf8(bytes, shown, this.diags);
    if (text === undefined) return undefined;
    const root = parseText(text, syntax, shown, this.diags);
    if (!root) return undefined;
    if (root.kind !== 'map') {
      this.diags.error(root.pos, '', 'expected a mapping with "global", "hosts" and "include"');
      return undefined;
    }
    const include = entryOf(root, 'include');
    if (!include || !this.followIncludes) return root;
    const merged = withoutEntry(root, 'include');
    const included: RawMap[] = [];
    for (const p of this.patterns(include)) {
      const matches = await this.expand(p.pattern, dirname(real), p.pos, [...chain, real]);
      for (const match of matches) {
        const sub = await this.read(match, [...chain, real], p.pos);
        if (sub) included.push(sub);
      }
    }
    return mergeIncluded(merged, included, this.diags);
  }

  /** The include patterns, `{{env.NAME}}` replaced: an unset name leaves a pattern that means nothing. */
  patterns(include: RawEntry): { pattern: string; pos: Pos }[] {
    const items = include.value.kind === 'list' ? include.value.items : [include.value];
    return items.flatMap((item, i) => {
      if (item.kind === 'scalar' && item.value === null) return [];
      if (item.kind !== 'scalar' || typeof item.value !== 'string' || item.value.length === 0) {
        this.diags.error(item.pos, 'include', 'expected a glob pattern string');
        return [];
      }
      const path = include.value.kind === 'list' ? `include[${i}]` : 'include';
      let unset = false;
      const pattern = substitute(item.value, this.env, (name, whole) => {
        unset = true;
        // `convert` keeps placeholders and may run without the environment the server will have.
        if (this.keepPlaceholders)
          this.diags.warn(
            item.pos,
            path,
            `not followed: environment variable ${name} is not set (used as ${whole})`,
          );
        else
          this.diags.error(
            item.pos,
            path,
            `environment variable ${name} is not set (used as ${whole})`,
          );
      });
      return unset ? [] : [{ pattern, pos: item.pos }];
    });
  }

  /**
   * A pattern's files, in name order. A pattern without glob syntax names one file, which must
   * exist; a glob may match nothing, but a directory it cannot read is an error (REFERENCE §22:
   * unreadable matches are fatal), as is a match that cannot be read (a dangling symbolic link).
   */
  async expand(
    pattern: string,
    base: string,
    pos: Pos,
    chain: readonly string[],
  ): Promise<string[]> {
    if (!isDynamicPattern(pattern)) return [resolve(base, pattern)];
    const unreadable: { dir: string; code: string }[] = [];
    try {
      // Absolute patterns are split so the glob runs from their fixed directory.
      const cwd = isAbsolute(pattern) ? '/' : base;
      const relativePattern = isAbsolute(pattern) ? pattern.slice(1) : pattern;
      const found = await glob(relativePattern, {
        cwd,
        absolute: true,
        onlyFiles: true,
        dot: false,
        expandDirectories: false,
        fs: reportingFs((dir, code) => unreadable.push({ dir, code })),
      });
      for (const { dir, code } of unreadable) {
        this.diags.error(
          pos,
          'include',
          `cannot read the directory ${this.display(dir)}: ${code} (included via ${this.chainText(chain)} → ${pattern})`,
        );
      }
      return unreadable.length > 0 ? [] : found.sort();
    } catch (e) {
      this.diags.error(
        pos,
        'include',
        `invalid glob ${JSON.stringify(pattern)}: ${(e as Error).message}`,
      );
      return [];
    }
  }
}

/**
 * The file system as the glob library sees it, with the errors it would swallow made visible: a
 * directory that cannot be read is reported (one that does not exist just matches nothing), and
 * a symbolic link that leads nowhere is passed on as a file, so that reading it names the problem.
 */
function reportingFs(unreadable: (dir: string, code: string) => void) {
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

function withoutEntry(map: RawMap, key: string): RawMap {
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
function mergeIncluded(root: RawMap, included: readonly RawMap[], diags: Diagnostics): RawMap {
  if (included.length === 0) return root;
  const globalEntry = entryOf(root, 'global');
  const hostsEntry = entryOf(root, 'hosts');
  const globalKeys = new Map<string, RawEntry>();
  const hosts: RawNode[] = [];
  for (const sub of included) {
    for (const e of sub.entries) {
      if (e.key !== 'global' && e.key !== 'hosts') {
        diags.error(
          e.keyPos,
          e.key,
          `unknown top-level key${didYouMean(e.key, ['global', 'hosts', 'include'])} (expected global, hosts or include)`,
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
