// Static file serving: the default handler at the end of every chain that has a wwwroot. One
// instance serves every host and location; its cache is keyed by the real wwwroot path.
import { resolve } from 'node:path';
import type { ResolvedSettings } from '../config/defaults.js';
import { codeInWords, inWords } from '../config/system-errors.js';
import type { Ctx } from '../http/ctx.js';
import type { ErrorPageRead } from '../http/resolved.js';
import { HttpError } from '../http/http-error.js';
import { send } from '../http/respond.js';
import { Refusal, type Outcome, type Stage } from '../http/stage.js';
import { decodePath } from '../http/paths.js';
import { readListing, renderListing } from './directory-listing.js';
import { acceptedEncodings, type Encoding } from '../http/encoding-negotiation.js';
import { BUILT_IN_TYPES, ContentTypes } from './content-type.js';
import { FileCache } from './file-cache.js';
import {
  FileChangedError,
  type DirectoryEntry,
  type Entry,
  type FileEntry,
  type NegativeEntry,
} from './file-entries.js';
import type { SymlinkPolicy } from './symlink-policy.js';
import { serveFile, type FileFlags, type Precompressed } from './file-response.js';

/** The files that hold a precompressed copy, by coding (no tool writes `.deflate` files). */
const PRECOMPRESSED_SUFFIXES: Partial<Record<Encoding, string>> = { br: '.br', gzip: '.gz' };

export interface StaticFilesOptions {
  /** Memory for cached entries, bodies and compressed variants (default 64 MiB). */
  maxCacheBytes?: number;
  /** Files up to this size are served from memory (default 1 MiB); larger ones are streamed. */
  maxCachedFileSize?: number;
  /** How many paths the cache remembers, negative results included (default 16384). */
  maxEntries?: number;
  /** How long a cached result is trusted before the disk is checked again (default 1000 ms). */
  revalidateMs?: number;
  /** Which symlinks leaving wwwroot are followed (default `ownerMatch`; symlink-policy.ts). */
  followSymlinks?: SymlinkPolicy;
}

interface StageFlags extends FileFlags {
  readonly listing: boolean;
  /** The files served for a directory, first found first (`indexFiles`). */
  readonly indexFiles: readonly string[];
  /** How files are typed: `mimeTypes` over the built-in table. */
  readonly types: ContentTypes;
}

/** One look for what a request names: the stage's root and flags, and whether to look again. */
interface Look {
  readonly wwwroot: string;
  readonly flags: StageFlags;
  /** A file that changed while it was read is looked up once more; on the second look, an error. */
  readonly mayRetry: boolean;
}

export type PathKind = 'file' | 'directory' | 'missing' | 'other';

function decodeForTitle(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

export class StaticFiles {
  private readonly cache: FileCache;
  private readonly maxCachedFileSize: number;

  constructor(options: StaticFilesOptions = {}) {
    this.maxCachedFileSize = options.maxCachedFileSize ?? 1024 * 1024;
    this.cache = new FileCache({
      maxCacheBytes: options.maxCacheBytes ?? 64 * 1024 * 1024,
      maxCachedFileSize: this.maxCachedFileSize,
      maxEntries: options.maxEntries ?? 16384,
      revalidateMs: options.revalidateMs ?? 1000,
      followSymlinks: options.followSymlinks ?? 'ownerMatch',
    });
  }

  /** What the decoded path names inside wwwroot: cached like files; used by the trailing-slash redirect. */
  kind(wwwroot: string, decodedPath: string, now?: number): PathKind | Promise<PathKind> {
    // Synchronous when the cache knows the path, so the trailing-slash check costs no promise.
    const found = this.cache.lookup(wwwroot, decodedPath, now);
    return found instanceof Promise ? found.then(kindOf) : kindOf(found);
  }

  /**
   * An errorPages file, from the same bounded, revalidated memory as the files served:
   * a flood of errors reads no file. Looked up under `/`, so a page may be anywhere, symlinks too;
   * one larger than the files held in memory (1 MiB) is refused.
   */
  async errorPage(path: string): Promise<ErrorPageRead> {
    try {
      const entry = await this.cache.lookup('/', resolve(path));
      if (entry.kind !== 'file')
        return {
          problem:
            entry.kind === 'missing'
              ? codeInWords('ENOENT')
              : entry.kind === 'forbidden'
                ? codeInWords('EACCES')
                : 'not a regular file',
        };
      if (!entry.cacheable) return { problem: `larger than ${this.maxCachedFileSize} bytes` };
      return { body: await this.cache.body(entry) };
    } catch (error) {
      return { problem: inWords(error) };
    }
  }

  /**
   * The stage that serves settings.wwwroot. It answers or refuses (a Refusal, or a thrown
   * HttpError); it never calls next. `errorPage`: it serves an errorConfig's page for an error,
   * which keeps the error's status (file-response.ts).
   */
  stage(settings: ResolvedSettings, { errorPage = false }: { errorPage?: boolean } = {}): Stage {
    if (settings.wwwroot === undefined) throw new Error('the static files stage needs wwwroot');
    // Relative to the working directory at compile time, resolved once.
    const wwwroot = resolve(settings.wwwroot);
    const flags: StageFlags = {
      etag: settings.enableETag,
      compression: settings.enableCompression,
      listing: settings.enableDirectoryListing,
      indexFiles: settings.indexFiles,
      types:
        settings.mimeTypes === undefined ? BUILT_IN_TYPES : new ContentTypes(settings.mimeTypes),
      errorPage,
    };
    const look: Look = { wwwroot, flags, mayRetry: true };
    return (ctx) => this.serve(ctx, look);
  }

  /** Drops every cached entry. The cache runs no timers: staleness is checked on use. */
  close(): void {
    this.cache.clear();
  }

  /**
   * Synchronous when the cache knows the path and holds the file (the usual hit and the usual 404):
   * no promise per request. Anything to read or check first takes `serveFound`.
   */
  private serve(ctx: Ctx, look: Look): Outcome {
    const { wwwroot, flags } = look;
    const entry = this.cache.lookup(wwwroot, decodePath(ctx.path), ctx.startedAt, flags.types);
    if (entry instanceof Promise || entry.kind === 'directory')
      return this.serveFound(ctx, look, entry);
    // Returned, not thrown: V8 builds a message (the throw's location) for an exception thrown
    // under a native callback, caught or not: a 404 flood ran at 31k req/s thrown, 42k rejected
    // (and a Refusal costs less than a rejected promise: stage.ts).
    if (entry.kind !== 'file') return REFUSED[entry.kind];
    const copy = this.precompressedFor(ctx, wwwroot, entry, flags);
    const sent =
      copy instanceof Promise
        ? copy.then((c) => serveFile(ctx, entry, this.cache, flags, c))
        : serveFile(ctx, entry, this.cache, flags, copy);
    return sent?.catch((error: unknown) => this.retry(error, ctx, look));
  }

  private async serveFound(ctx: Ctx, look: Look, found: Entry | Promise<Entry>): Promise<void> {
    const { wwwroot, flags } = look;
    try {
      let entry = await found;
      if (entry.kind === 'directory') {
        const index = await this.findIndex(wwwroot, entry, flags);
        if (index === undefined) return await this.serveDirectory(ctx, entry, flags);
        entry = index;
      }
      if (entry.kind !== 'file') throw REFUSED[entry.kind].error;
      const copy = await this.precompressedFor(ctx, wwwroot, entry, flags);
      return await serveFile(ctx, entry, this.cache, flags, copy);
    } catch (error) {
      return this.retry(error, ctx, look);
    }
  }

  /**
   * The file changed between its check and its read (a deploy in progress): the cache has dropped
   * it, so one more look finds what is there now.
   */
  private retry(error: unknown, ctx: Ctx, look: Look): Outcome {
    if (!(error instanceof FileChangedError) || ctx.responded) throw error;
    if (look.mayRetry) return this.serve(ctx, { ...look, mayRetry: false });
    throw new HttpError(500, 'file-error', { detail: `static files: ${error.message}, twice` });
  }

  /** A precompressed copy to send instead, when compression is on and the client takes one. */
  private precompressedFor(
    ctx: Ctx,
    wwwroot: string,
    entry: FileEntry,
    flags: StageFlags,
  ): Precompressed | undefined | Promise<Precompressed | undefined> {
    if (!flags.compression || flags.errorPage) return undefined;
    return this.precompressed(
      wwwroot,
      entry,
      acceptedEncodings(ctx.req.headers['accept-encoding']),
      0,
    );
  }

  /**
   * A `.br` or `.gz` file beside the one asked for, in the client's order of preference (nginx's
   * gzip_static, Caddy's precompressed). One older than the file is a leftover of an earlier
   * version and is passed over.
   */
  private precompressed(
    wwwroot: string,
    entry: FileEntry,
    encodings: readonly Encoding[],
    from: number,
  ): Precompressed | undefined | Promise<Precompressed | undefined> {
    for (let i = from; i < encodings.length; i++) {
      const encoding = encodings[i]!;
      const suffix = PRECOMPRESSED_SUFFIXES[encoding];
      if (suffix === undefined) continue;
      const pick = (file: Entry) =>
        file.kind === 'file' && file.mtimeMs >= entry.mtimeMs
          ? { encoding, file }
          : this.precompressed(wwwroot, entry, encodings, i + 1);
      const found = this.cache.lookup(wwwroot, entry.path + suffix);
      return found instanceof Promise ? found.then(pick) : pick(found);
    }
    return undefined;
  }

  /** The first index file that is a regular file. */
  private async findIndex(
    wwwroot: string,
    directory: DirectoryEntry,
    flags: StageFlags,
  ): Promise<FileEntry | undefined> {
    for (const name of flags.indexFiles) {
      const candidate = await this.cache.lookup(
        wwwroot,
        directory.base + name,
        undefined,
        flags.types,
      );
      if (candidate.kind === 'file') return candidate;
    }
    return undefined;
  }

  private async serveDirectory(
    ctx: Ctx,
    directory: DirectoryEntry,
    flags: StageFlags,
  ): Promise<void> {
    if (!flags.listing)
      throw new HttpError(403, 'forbidden', {
        detail: 'static files: directory without index, listing disabled',
      });
    let entries;
    try {
      entries = await readListing(directory.realPath, directory.rootReal);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EACCES' || code === 'EPERM')
        throw new HttpError(403, 'forbidden', {
          detail: `static files: ${(error as Error).message}`,
        });
      if (code === 'ENOENT' || code === 'ENOTDIR')
        throw new HttpError(404, 'not-found', {
          detail: `static files: ${(error as Error).message}`,
        });
      throw error;
    }
    // Links are absolute, built on the path the client asked for, so `/dir` without its slash
    // still links to `/dir/name`.
    const path = ctx.originalPath;
    const base = path.endsWith('/') ? path : `${path}/`;
    const body = Buffer.from(renderListing({ title: decodeForTitle(base), base, entries }));
    const headers = [
      'Content-Type',
      'text/html; charset=utf-8',
      'Content-Length',
      String(body.length),
    ];
    // A listing changes with the directory: not reused unchecked, unless the user said otherwise.
    if (!ctx.resolved.headerRules.custom.some((h) => h.lower === 'cache-control'))
      headers.push('Cache-Control', 'no-cache');
    send(ctx, 200, headers, body);
  }
}

// What a path that is no file gets: one shared answer each, so a scanner's flood of 404s makes no
// error object per request.
const NOT_FOUND = new HttpError(404, 'not-found', { detail: 'static files: not found' });
const FORBIDDEN = new HttpError(403, 'forbidden', { detail: 'static files: permission denied' });
const NOT_A_FILE = new HttpError(501, 'not-a-file', {
  detail: 'static files: neither a file nor a directory',
});

// Immutable, so shared by every request refused: returned as they are by the synchronous path,
// their error thrown by the asynchronous one.
const REFUSED: Record<NegativeEntry['kind'], Refusal> = {
  missing: new Refusal(NOT_FOUND),
  forbidden: new Refusal(FORBIDDEN),
  other: new Refusal(NOT_A_FILE),
};

/** Permission denied is not a directory to redirect to; the static stage answers it with 403. */
function kindOf(entry: { kind: PathKind | 'forbidden' }): PathKind {
  return entry.kind === 'forbidden' ? 'other' : entry.kind;
}
