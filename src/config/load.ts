// Files → raw tree → Config. Reads the main file by its extension (UTF-8 only), resolves `include`
// globs relative to the including file (`{{env.NAME}}` in them first), merges included files (their
// hosts after the includer's, their global keys under it), interpolates `{{env.NAME}}`, validates
// against the property table, then runs the checks. The environment's overrides (FERRON_PORT…)
// apply over the files, after interpolation.
import { readFile, realpath } from 'node:fs/promises';
import { dirname, extname, isAbsolute, relative, resolve } from 'node:path';
import { glob, isDynamicPattern } from 'tinyglobby';
import { checkConfig, type ConfigCheck } from './checks.js';
import { Diagnostics, type Diagnostic } from './diagnostics.js';
import { applyEnvOverrides, type EnvOverride } from './env-overrides.js';
import { interpolate, substitute } from './env-placeholders.js';
import { mergeIncluded, reportingFs, withoutEntry } from './includes.js';
import { parseKdl } from './kdl.js';
import { CORE_TABLE, type PropertyTable } from './property-table.js';
import { entryOf, type Pos, type RawEntry, type RawMap, type RawNode } from './raw.js';
import { inWords } from './system-errors.js';
import { decodeUtf8 } from './utf8.js';
import { validate, type Config, type ValidateOptions } from './validate.js';
import { parseYaml } from './yaml.js';

export interface LoadOptions {
  /** Environment for `{{env.NAME}}`; process.env when absent. */
  readonly env?: NodeJS.ProcessEnv;
  /** Keep placeholders instead of reading the environment (`convert`). */
  readonly keepPlaceholders?: boolean;
  /** Resolve includes (default true; `convert` works on one file). */
  readonly includes?: boolean;
  /** Paths in messages are shown relative to this directory (default: the working directory). */
  readonly cwd?: string;
  /**
   * The property table to read against: the build's (modules/registry.ts) or a test's; absent,
   * the core properties alone, as for a build without modules.
   */
  readonly properties?: PropertyTable;
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

/**
 * Parses text of one syntax into a raw tree; `file` is the name used in messages. KDL is read
 * against the table, which says how each property's node is written.
 */
export function parseText(
  text: string,
  syntax: Syntax,
  file: string,
  diags: Diagnostics,
  properties: PropertyTable,
): RawNode | undefined {
  // A UTF-8 byte order mark is no part of the configuration, and would shift line 1's columns.
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  return syntax === 'kdl' ? parseKdl(body, file, diags, properties) : parseYaml(body, file, diags);
}

export async function loadConfig(file: string, options: LoadOptions = {}): Promise<LoadResult> {
  const diags = new Diagnostics();
  const env = options.env ?? process.env;
  const properties = options.properties ?? CORE_TABLE;
  const reader = new TreeReader(
    diags,
    properties,
    options.cwd ?? process.cwd(),
    options.includes ?? true,
    env,
    options.keepPlaceholders ?? false,
  );
  const raw = await reader.read(resolve(options.cwd ?? process.cwd(), file), [], undefined);
  if (!raw) return { config: undefined, diagnostics: sorted(diags), files: reader.files, raw };
  // Validation runs even after other errors, so one run reports everything that needs fixing.
  let environment: EnvOverride[] = [];
  if (!options.keepPlaceholders) {
    interpolate(raw, env, diags);
    environment = applyEnvOverrides(raw, env, diags);
  }
  const config = validated(raw, diags, options.checks ?? [], {
    properties,
    placeholders: options.keepPlaceholders ?? false,
    ...(options.keepPlaceholders ? {} : { baseDir: (shown: string) => reader.dirOf(shown) }),
  });
  return {
    config: withEnvironment(config, environment),
    diagnostics: sorted(diags),
    files: reader.files,
    raw,
  };
}

/** Loads configuration text that is not in a file (the built-in default, tests); relative paths are relative to `baseDir`. */
export function loadConfigText(
  text: string,
  syntax: Syntax,
  label: string,
  {
    env = process.env,
    baseDir = process.cwd(),
    properties = CORE_TABLE,
    checks = [],
  }: {
    env?: NodeJS.ProcessEnv;
    baseDir?: string;
    properties?: PropertyTable;
    checks?: readonly ConfigCheck[];
  } = {},
): LoadResult {
  const diags = new Diagnostics();
  const raw = parseText(text, syntax, label, diags, properties);
  if (!raw) return { config: undefined, diagnostics: diags.list, files: [], raw: undefined };
  interpolate(raw, env, diags);
  const environment = raw.kind === 'map' ? applyEnvOverrides(raw, env, diags) : [];
  // A text that is not a mapping (a lone scalar or list) is refused by the validator, with a message.
  const config = validated(raw, diags, checks, { properties, baseDir: () => baseDir });
  return {
    config: withEnvironment(config, environment),
    diagnostics: sorted(diags),
    files: [],
    raw: raw.kind === 'map' ? raw : undefined,
  };
}

function withEnvironment(
  config: Config | undefined,
  environment: readonly EnvOverride[],
): Config | undefined {
  return config && environment.length > 0 ? { ...config, environment } : config;
}

/** The Config, checked, or undefined when anything in it is an error. */
function validated(
  raw: RawNode,
  diags: Diagnostics,
  checks: readonly ConfigCheck[],
  options: ValidateOptions,
): Config | undefined {
  const result = validate(raw, diags, options);
  if (result) checkConfig(result, diags, checks, { files: !options.placeholders });
  return diags.hasErrors ? undefined : result?.config;
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

class TreeReader {
  readonly files: string[] = [];
  /** Each file's directory, by the name positions use. */
  private readonly dirs = new Map<string, string>();
  /** How each file read so far was reached (real paths, the main file first), to name both ways in. */
  private readonly reachedVia = new Map<string, readonly string[]>();

  constructor(
    readonly diags: Diagnostics,
    readonly properties: PropertyTable,
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
    const root = parseText(text, syntax, shown, this.diags, this.properties);
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
