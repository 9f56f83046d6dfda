// The HTTP/2 baseline of bench/h2.sh: a node:http2 TLS server on the core stream API (no
// compatibility request/response objects, the fastest a Node HTTP/2 server gets), answering every
// file of a directory from memory. Usage: node bench/minimal-h2-server.mjs PORT DIR CERT KEY
import { readdirSync, readFileSync } from 'node:fs';
import { createSecureServer } from 'node:http2';
import { join } from 'node:path';

const [port, dir, cert, key] = process.argv.slice(2);
const files = new Map(readdirSync(dir).map((name) => [`/${name}`, readFileSync(join(dir, name))]));
const server = createSecureServer({
  cert: readFileSync(cert),
  key: readFileSync(key),
  minVersion: 'TLSv1.3',
});
server.on('stream', (stream, headers) => {
  const body = files.get(headers[':path']);
  if (!body) return stream.respond({ ':status': 404 }, { endStream: true });
  stream.respond({ ':status': 200, 'content-type': 'text/html', 'content-length': body.length });
  stream.end(body);
});
server.listen(Number(port), '127.0.0.1');
