// Which script a request runs (REFERENCE-behaviour.md §16.1 and §16.3): the file the path names,
// a directory's index.php or index.cgi, or the deepest file prefix of a path that goes on below
// it (`/index.php/route` → PATH_INFO `/route`). A script is only ever a regular file whose real
// path is inside wwwroot's: symbolic links leading out and `..` never run anything.
import { promises as fsp, type Stats } from 'node:fs';
import { extname, join, relative, resolve, sep } from 'node:path';
import type { ScriptTarget } from './cgi-variables.js';

const INDEXES = ['index.php', 'index.cgi'];

/** Whether a script at this request path (decoded, `/`-separated) may run. */
export type ScriptRule = (requestPath: string) => boolean;

/** Runs files with one of these extensions (`.php`), compared case-insensitively. */
export function byExtension(extensions: readonly string[]): ScriptRule {
  const wanted = new Set(extensions.map((e) => e.toLowerCase()));
  return (path) => wanted.has(extname(path).toLowerCase());
}

/** Any file under `/cgi-bin/` runs, whatever its extension (Ferron's rule). */
export function inCgiBin(path: string): boolean {
  return path === '/cgi-bin' || path.startsWith('/cgi-bin/');
}

async function statOf(path: string): Promise<Stats | NodeJS.ErrnoException> {
  try {
    return await fsp.stat(path);
  } catch (e) {
    return e as NodeJS.ErrnoException;
  }
}

function isInside(real: string, rootReal: string): boolean {
  return real === rootReal || real.startsWith(rootReal.endsWith(sep) ? rootReal : rootReal + sep);
}

/**
 * Decisions are kept for 100 ms per (rule, wwwroot, path), as Ferron keeps them: a busy script
 * costs one look at the disk per tenth of a second, and a changed file is seen as fast.
 */
const DECISION_MS = 100;
const MAX_DECISIONS = 4096;
const decisions = new WeakMap<
  ScriptRule,
  Map<string, { at: number; found: Promise<ScriptTarget | undefined> }>
>();

/** The script for `decodedPath` under `wwwroot` (absolute), or undefined: the request passes on. */
export function findScript(
  wwwroot: string,
  decodedPath: string,
  rule: ScriptRule,
): Promise<ScriptTarget | undefined> {
  let known = decisions.get(rule);
  if (known === undefined) decisions.set(rule, (known = new Map()));
  const key = `${wwwroot}\0${decodedPath}`;
  const now = Date.now();
  const decided = known.get(key);
  if (decided !== undefined && now - decided.at < DECISION_MS) return decided.found;
  if (known.size >= MAX_DECISIONS) known.clear();
  const found = lookUp(wwwroot, decodedPath, rule);
  known.set(key, { at: now, found });
  return found;
}

async function lookUp(
  wwwroot: string,
  decodedPath: string,
  rule: ScriptRule,
): Promise<ScriptTarget | undefined> {
  let rootReal: string;
  try {
    rootReal = await fsp.realpath(wwwroot);
  } catch {
    return undefined;
  }
  const segments = decodedPath.split('/').filter((s) => s !== '');
  if (segments.some((s) => s === '..' || s.includes('\0'))) return undefined;
  const script = async (
    requestPath: string,
    pathInfo: string,
  ): Promise<ScriptTarget | undefined> => {
    if (!rule(requestPath)) return undefined;
    const filename = join(wwwroot, requestPath);
    let real: string;
    try {
      real = await fsp.realpath(filename);
    } catch {
      return undefined;
    }
    if (!isInside(real, rootReal)) return undefined;
    const stats = await statOf(real);
    if (stats instanceof Error || !stats.isFile()) return undefined;
    const name = `/${relative(wwwroot, filename).split(sep).join('/')}`;
    return { filename, name, pathInfo, documentRoot: wwwroot };
  };
  const full = `/${segments.join('/')}`;
  const stats = await statOf(join(wwwroot, full));
  if (!(stats instanceof Error)) {
    if (stats.isFile()) return script(full, '');
    if (!stats.isDirectory()) return undefined;
    for (const index of INDEXES) {
      const found = await script(`${full === '/' ? '' : full}/${index}`, '');
      if (found) return found;
    }
    return undefined;
  }
  // `/index.php/route`: the path goes on below a file. The deepest file prefix is the script.
  if (stats.code !== 'ENOTDIR') return undefined;
  for (let i = segments.length - 1; i > 0; i--) {
    const prefix = `/${segments.slice(0, i).join('/')}`;
    const prefixStats = await statOf(join(wwwroot, prefix));
    if (prefixStats instanceof Error) continue;
    if (!prefixStats.isFile()) return undefined;
    return script(prefix, `/${segments.slice(i).join('/')}`);
  }
  return undefined;
}

/**
 * Path mode (`scgiPath`, `fcgiPath`): a plain string prefix of the path (`/app` matches
 * `/application` too, as in Ferron); the whole path names the script, no file is looked for.
 */
export function prefixScript(
  wwwroot: string,
  prefix: string,
  decodedPath: string,
): ScriptTarget | undefined {
  const base = prefix.endsWith('/') ? prefix.slice(0, -1) : prefix;
  if (!decodedPath.startsWith(base)) return undefined;
  const path = decodedPath === base ? `${base}/` : decodedPath;
  const rest = path.slice(base.length);
  return {
    filename: join(wwwroot, path),
    name: path,
    pathInfo: rest.startsWith('/') ? rest : '',
    documentRoot: wwwroot,
  };
}

/**
 * wwwroot made absolute, remembered for the last one asked: a gateway stage sees one wwwroot (or
 * a few), and resolving it per request was a `path.resolve` each time.
 */
export class RootResolver {
  private last: string | undefined;
  private resolved = '';

  of(wwwroot: string): string {
    if (wwwroot !== this.last) {
      this.last = wwwroot;
      this.resolved = resolve(wwwroot);
    }
    return this.resolved;
  }
}
