// What the files under each wwwroot are, kept in memory so a request for a known file makes no
// filesystem call. One bounded LRU (bytes and entries) holds, per (real wwwroot, decoded path, and
// the location's `mimeTypes` when it has any: content-type.ts), the resolution result and, for
// small files, the body and its compressed variants. An entry is trusted for `revalidateMs`; after
// that it is realpath'ed and stat'ed again before use, and kept (body included) only if it still
// names the same file with the same size and mtime.
import type { Stats } from 'node:fs';
import { constants, promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import { LRUCache } from 'lru-cache';
import { HttpError } from '../http/http-error.js';
import { joinedText } from '../http/respond.js';
import type { Encoding } from '../http/encoding-negotiation.js';
import { compressBuffer, isCompressible, MAX_UNCOMPRESSED_SIZE } from './compression.js';
import { entityTag } from './conditional.js';
import { BUILT_IN_TYPES, type ContentTypes } from './content-type.js';
import {
  FileChangedError,
  type Entry,
  type FileEntry,
  type NegativeEntry,
} from './file-entries.js';
import { followsOutside, type SymlinkPolicy } from './symlink-policy.js';

export interface FileCacheOptions {
  readonly maxCacheBytes: number;
  readonly maxCachedFileSize: number;
  readonly maxEntries: number;
  readonly revalidateMs: number;
  readonly followSymlinks: SymlinkPolicy;
}

const ENTRY_OVERHEAD = 256;
// O_NONBLOCK: a path swapped for a FIFO after the stat must not block a pool thread in open().
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

interface RootEntry {
  readonly path: string;
  /** undefined: wwwroot does not exist or cannot be resolved; every lookup is `missing`. */
  real: string | undefined;
  checkedAt: number;
  /** The realpath under way, shared by the requests that find the root stale together. */
  refreshing: Promise<RootEntry> | undefined;
}

/** One check of a path on disk: its key, where it is, what was known of it, and when. */
interface PathCheck {
  readonly key: string;
  readonly rootReal: string;
  readonly decodedPath: string;
  /** The entry it replaces: kept when the file is the same. */
  readonly previous: Entry | undefined;
  readonly now: number;
  readonly types: ContentTypes;
}

function negative(kind: NegativeEntry['kind'], now: number): NegativeEntry {
  return { kind, checkedAt: now };
}

/** Turns a filesystem error into what the client learns; unexpected errors are 500 and not cached. */
function negativeKind(error: unknown): 'missing' | 'forbidden' {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP' || code === 'ENAMETOOLONG')
    return 'missing';
  if (code === 'EACCES' || code === 'EPERM') return 'forbidden';
  throw new HttpError(500, 'file-error', { detail: `static files: ${(error as Error).message}` });
}

/** Whether a real (symlink-free) path is wwwroot's real path or lies below it. */
export function isInside(real: string, rootReal: string): boolean {
  if (real === rootReal) return true;
  const prefix = rootReal.endsWith(sep) ? rootReal : rootReal + sep;
  return real.startsWith(prefix);
}

function sameFile(entry: FileEntry, stats: Stats): boolean {
  return (
    entry.size === stats.size &&
    entry.mtimeMs === stats.mtimeMs &&
    entry.ino === stats.ino &&
    entry.dev === stats.dev
  );
}

function entryBytes(entry: Entry): number {
  if (entry.kind !== 'file') return ENTRY_OVERHEAD;
  let bytes =
    ENTRY_OVERHEAD +
    2 * (entry.key.length + entry.realPath.length) +
    (entry.body?.length ?? 0) +
    (entry.bodyText?.length ?? 0);
  for (const variant of entry.variants.values())
    if (Buffer.isBuffer(variant)) bytes += variant.length;
  return bytes;
}

export class FileCache {
  private readonly entries: LRUCache<string, Entry>;
  private readonly roots = new Map<string, RootEntry>();
  private readonly pending = new Map<string, Promise<Entry>>();
  // The last path found: the trailing-slash check and the static stage look up the same path one
  // after the other, and the second skips the key and the LRU (a tenth of an HTTP/2 hit's own work).
  private lastRoot: string | undefined;
  private lastPath = '';
  private lastTypes: ContentTypes = BUILT_IN_TYPES;
  private lastEntry: Entry | undefined;

  constructor(private readonly options: FileCacheOptions) {
    this.entries = new LRUCache<string, Entry>({
      max: options.maxEntries,
      maxSize: options.maxCacheBytes,
      sizeCalculation: entryBytes,
    });
  }

  /**
   * What `decodedPath` names under `wwwroot` (as configured: relative to the working directory),
   * a file typed by `types`. `now` is the caller's clock when it has one (a request's start): one
   * clock read per request.
   */
  lookup(
    wwwroot: string,
    decodedPath: string,
    now = Date.now(),
    types = BUILT_IN_TYPES,
  ): Entry | Promise<Entry> {
    let root = this.roots.get(wwwroot);
    if (root !== undefined && this.isFresh(root.checkedAt, now))
      return this.lookupUnder(root, decodedPath, now, types);
    if (root === undefined) {
      root = { path: resolve(wwwroot), real: undefined, checkedAt: 0, refreshing: undefined };
      this.roots.set(wwwroot, root);
    }
    root.refreshing ??= this.refreshRoot(root);
    return root.refreshing.then((fresh) => this.lookupUnder(fresh, decodedPath, Date.now(), types));
  }

  /** The whole body of a small file, read once. */
  body(entry: FileEntry): Buffer | Promise<Buffer> {
    if (entry.body !== undefined) return entry.body;
    entry.loading ??= this.readWhole(entry).finally(() => (entry.loading = undefined));
    return entry.loading;
  }

  /** A small file's body in `encoding`, compressed once. */
  variant(entry: FileEntry, encoding: Encoding): Buffer | Promise<Buffer> {
    const known = entry.variants.get(encoding);
    if (known !== undefined) return known;
    const compressing = (async () => {
      try {
        const compressed = await compressBuffer(await this.body(entry), encoding);
        entry.variants.set(encoding, compressed);
        this.resize(entry);
        return compressed;
      } catch (error) {
        entry.variants.delete(encoding);
        throw error;
      }
    })();
    entry.variants.set(encoding, compressing);
    return compressing;
  }

  /**
   * Opens the file the entry describes and proves it is still that file (same inode, size and
   * mtime), so a path swapped since the check (say, for a symlink leaving wwwroot) is never read.
   */
  async open(entry: FileEntry): Promise<FileHandle> {
    let handle: FileHandle;
    try {
      handle = await fsp.open(entry.realPath, OPEN_FLAGS);
    } catch (error) {
      this.forget(entry);
      if ((error as NodeJS.ErrnoException).code === 'ENOENT')
        throw new FileChangedError(entry.realPath);
      const kind = negativeKind(error);
      throw kind === 'missing'
        ? new HttpError(404, 'not-found', { detail: `static files: ${(error as Error).message}` })
        : new HttpError(403, 'forbidden', { detail: `static files: ${(error as Error).message}` });
    }
    try {
      if (sameFile(entry, await handle.stat())) return handle;
    } catch (error) {
      await handle.close();
      throw error;
    }
    await handle.close();
    this.forget(entry);
    throw new FileChangedError(entry.realPath);
  }

  /** Drops an entry that turned out to be stale, so the next lookup checks the disk again. */
  forget(entry: FileEntry): void {
    if (this.lastEntry === entry) this.lastEntry = undefined;
    if (this.entries.peek(entry.key) === entry) this.entries.delete(entry.key);
  }

  clear(): void {
    this.lastEntry = undefined;
    this.entries.clear();
    this.roots.clear();
    this.pending.clear();
  }

  private isFresh(checkedAt: number, now: number): boolean {
    return now - checkedAt < this.options.revalidateMs;
  }

  /** Re-resolves wwwroot itself: a deployment that swaps a `current` symlink is noticed too. */
  private async refreshRoot(root: RootEntry): Promise<RootEntry> {
    try {
      root.real = await fsp.realpath(root.path);
    } catch (error) {
      negativeKind(error);
      root.real = undefined;
    } finally {
      root.refreshing = undefined;
    }
    root.checkedAt = Date.now();
    return root;
  }

  private lookupUnder(
    root: RootEntry,
    decodedPath: string,
    now: number,
    types: ContentTypes,
  ): Entry | Promise<Entry> {
    if (root.real === undefined) return negative('missing', root.checkedAt);
    const last = this.lastEntry;
    if (
      last !== undefined &&
      this.lastPath === decodedPath &&
      this.lastRoot === root.real &&
      this.lastTypes === types &&
      this.isFresh(last.checkedAt, now)
    )
      return last;
    // NUL cannot occur in a path, so two (root, path, types) never share a key.
    const key =
      types.id === ''
        ? `${root.real}\0${decodedPath}`
        : `${root.real}\0${decodedPath}\0${types.id}`;
    const entry = this.entries.get(key);
    if (entry !== undefined && this.isFresh(entry.checkedAt, now)) {
      this.lastRoot = root.real;
      this.lastPath = decodedPath;
      this.lastTypes = types;
      this.lastEntry = entry;
      return entry;
    }
    let checking = this.pending.get(key);
    if (checking === undefined) {
      const started = this.check(key, root.real, decodedPath, entry, types).finally(() => {
        if (this.pending.get(key) === started) this.pending.delete(key);
      });
      this.pending.set(key, (checking = started));
    }
    return checking;
  }

  private async check(
    key: string,
    rootReal: string,
    decodedPath: string,
    previous: Entry | undefined,
    types: ContentTypes,
  ): Promise<Entry> {
    const now = Date.now();
    let entry: Entry;
    try {
      const real = await fsp.realpath(join(rootReal, decodedPath));
      // A symlink leaving wwwroot that is not followed is reported as missing: a 403 would confirm
      // something is there.
      if (
        !isInside(real, rootReal) &&
        !(await followsOutside(this.options.followSymlinks, rootReal, decodedPath))
      )
        entry = negative('missing', now);
      else
        entry = this.describe(real, await fsp.stat(real), {
          key,
          rootReal,
          decodedPath,
          previous,
          now,
          types,
        });
    } catch (error) {
      entry = negative(negativeKind(error), now);
    }
    this.entries.set(key, entry);
    return entry;
  }

  /** The entry for the real path `real`, whose stats are `stats`. */
  private describe(
    real: string,
    stats: Stats,
    { key, rootReal, decodedPath, previous, now, types }: PathCheck,
  ): Entry {
    if (stats.isFile()) {
      if (previous?.kind === 'file' && previous.realPath === real && sameFile(previous, stats)) {
        previous.checkedAt = now;
        return previous;
      }
      const contentType = types.typeFor(decodedPath);
      return {
        kind: 'file',
        checkedAt: now,
        key,
        path: decodedPath,
        realPath: real,
        size: stats.size,
        mtimeMs: stats.mtimeMs,
        ino: stats.ino,
        dev: stats.dev,
        contentType,
        compressible:
          stats.size > MAX_UNCOMPRESSED_SIZE && isCompressible(decodedPath, contentType),
        etag: entityTag(stats),
        lastModified: new Date(stats.mtimeMs).toUTCString(),
        cacheable: stats.size <= this.options.maxCachedFileSize,
        body: undefined,
        bodyText: undefined,
        loading: undefined,
        variants: new Map(),
        heads: [],
      };
    }
    if (stats.isDirectory())
      return {
        kind: 'directory',
        checkedAt: now,
        realPath: real,
        rootReal,
        base: decodedPath.endsWith('/') ? decodedPath : `${decodedPath}/`,
      };
    return negative('other', now);
  }

  private async readWhole(entry: FileEntry): Promise<Buffer> {
    const handle = await this.open(entry);
    try {
      // Not from Buffer's shared pool: a cached body must not pin an 8 KiB pool slab.
      const body = Buffer.allocUnsafeSlow(entry.size);
      let offset = 0;
      while (offset < entry.size) {
        const { bytesRead } = await handle.read(body, offset, entry.size - offset, offset);
        if (bytesRead === 0) break;
        offset += bytesRead;
      }
      if (offset < entry.size) {
        this.forget(entry);
        throw new FileChangedError(entry.realPath);
      }
      entry.body = body;
      entry.bodyText = joinedText(body);
      this.resize(entry);
      return body;
    } finally {
      await handle.close();
    }
  }

  /** Re-sets an entry whose size grew (body or variant added), if it is still the current one. */
  private resize(entry: FileEntry): void {
    if (this.entries.peek(entry.key) === entry) this.entries.set(entry.key, entry);
  }
}
