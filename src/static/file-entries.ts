// What the file cache knows of a path under a wwwroot: a file (with its body and coded variants
// when small), a directory, or why there is nothing to serve.
import type { KeptHead } from '../http/respond.js';
import type { Encoding } from '../http/encoding-negotiation.js';

export interface FileEntry {
  readonly kind: 'file';
  checkedAt: number;
  readonly key: string;
  /** The decoded request path it was found by (precompressed siblings are found beside it). */
  readonly path: string;
  readonly realPath: string;
  readonly size: number;
  readonly mtimeMs: number;
  readonly ino: number;
  readonly dev: number;
  readonly contentType: string | undefined;
  /** Worth compressing by type and size (enableCompression aside). */
  readonly compressible: boolean;
  readonly etag: string;
  readonly lastModified: string;
  /** Whether the body is small enough to be held in memory. */
  readonly cacheable: boolean;
  body: Buffer | undefined;
  /** The body's joinedText (respond.ts), made with it: a small file is sent as text every time. */
  bodyText: string | undefined;
  loading: Promise<Buffer> | undefined;
  readonly variants: Map<Encoding, Buffer | Promise<Buffer>>;
  /** 200 response heads, built once per (coding, flags) by file-response.ts. */
  readonly heads: (KeptHead | undefined)[];
}

export interface DirectoryEntry {
  readonly kind: 'directory';
  checkedAt: number;
  readonly realPath: string;
  readonly rootReal: string;
  /** Its decoded request path, with a trailing slash: where index files are looked for. */
  readonly base: string;
}

/** missing: not found, or outside wwwroot; forbidden: permission denied; other: FIFO, socket… */
export interface NegativeEntry {
  readonly kind: 'missing' | 'forbidden' | 'other';
  checkedAt: number;
}

export type Entry = FileEntry | DirectoryEntry | NegativeEntry;

/** The file changed between stat and read; the entry is dropped and the request can retry. */
export class FileChangedError extends Error {
  constructor(path: string) {
    super(`${path} changed while being opened`);
    this.name = 'FileChangedError';
  }
}
