// The HTTP/2 baseline of bench/h2.sh: a node:http2 TLS server on the core stream API (no
// compatibility request/response objects, the fastest a Node HTTP/2 server gets), answering every
// file of a directory from memory. With `static-head`, each response carries the head a static
// file server sends (Portico's, nginx's: Accept-Ranges, Last-Modified, ETag, Vary, Server), built
// once per file: what node:http2 costs for those fields alone, apart from any server's own work.
// Usage: node bench/minimal-h2-server.mjs PORT DIR CERT KEY [static-head]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createSecureServer } from 'node:http2';
import { join } from 'node:path';

const [port, dir, cert, key, head] = process.argv.slice(2);
const files = new Map(
  readdirSync(dir).map((name) => {
    const body = readFileSync(join(dir, name));
    if (head !== 'static-head') return [`/${name}`, { body, fields: undefined }];
    const { mtime, size } = statSync(join(dir, name));
    const fields = {
      ':status': 200,
      'content-type': 'text/html',
      'content-length': body.length,
      'accept-ranges': 'bytes',
      'last-modified': mtime.toUTCString(),
      etag: `"${size.toString(16)}-${mtime.getTime().toString(16)}"`,
      vary: 'Accept-Encoding',
      server: 'minimal',
    };
    return [`/${name}`, { body, fields }];
  }),
);
const server = createSecureServer({
  cert: readFileSync(cert),
  key: readFileSync(key),
  minVersion: 'TLSv1.3',
});
server.on('stream', (stream, headers) => {
  const file = files.get(headers[':path']);
  if (!file) return stream.respond({ ':status': 404 }, { endStream: true });
  stream.respond(
    file.fields ?? {
      ':status': 200,
      'content-type': 'text/html',
      'content-length': file.body.length,
    },
  );
  stream.end(file.body);
});
server.listen(Number(port), '127.0.0.1');
