// Content-Type of a served file, from its name. `mime-types` knows which types are text (it
// answers `UTF-8` for text/*, JavaScript and JSON); those get `; charset=utf-8`, as Caddy sends,
// because browsers otherwise guess the encoding of a UTF-8 file. XML and SVG carry their own
// encoding declaration, so they get none. An unknown extension gets no Content-Type at all
// (RFC 9110 §8.3 allows that when the type is unknown, and it is what Ferron does). A location's
// `mimeTypes` come first, sent as written. Called once per cache entry, not per request.
import { createHash } from 'node:crypto';
import { extname } from 'node:path';
import mime from 'mime-types';

/** The built-in table with a location's `mimeTypes` over it. */
export class ContentTypes {
  private readonly own: ReadonlyMap<string, string>;
  /**
   * Tells the file cache's entries apart (file-cache.ts), as an entry's type is the table's it was
   * found with: empty for the built-in table alone, else a digest of the mapping, the same for
   * equal mappings of any location or Plan.
   */
  readonly id: string;

  constructor(mimeTypes: Readonly<Record<string, string>> = {}) {
    const own = Object.entries(mimeTypes).map(([ext, type]) => [ext.toLowerCase(), type] as const);
    own.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    this.own = new Map(own);
    this.id =
      own.length === 0
        ? ''
        : createHash('sha256').update(JSON.stringify(own)).digest('base64url').slice(0, 22);
  }

  typeFor(name: string): string | undefined {
    const ext = extname(name);
    if (ext === '') return undefined;
    const own = this.own.size === 0 ? undefined : this.own.get(ext.toLowerCase());
    if (own !== undefined) return own;
    const type = mime.lookup(ext);
    if (type === false) return undefined;
    return mime.charset(type) === 'UTF-8' ? `${type}; charset=utf-8` : type;
  }
}

export const BUILT_IN_TYPES = new ContentTypes();
