// Content-Type of a served file, from its name. `mime-types` knows which types are text (it
// answers `UTF-8` for text/*, JavaScript and JSON); those get `; charset=utf-8`, as Caddy sends,
// because browsers otherwise guess the encoding of a UTF-8 file. XML and SVG carry their own
// encoding declaration, so they get none. An unknown extension gets no Content-Type at all
// (RFC 9110 §8.3 allows that when the type is unknown, and it is what Ferron does).
// Called once per cache entry, not per request.
import { extname } from 'node:path';
import mime from 'mime-types';

export function contentTypeFor(name: string): string | undefined {
  const ext = extname(name);
  if (ext === '') return undefined;
  const type = mime.lookup(ext);
  if (type === false) return undefined;
  return mime.charset(type) === 'UTF-8' ? `${type}; charset=utf-8` : type;
}
