// The HTTP/2 baseline of bench/h2.sh: a node:http2 TLS server answering every file of a directory
// from memory. Usage: node bench/minimal-h2-server.mjs PORT DIR CERT KEY
import { readdirSync, readFileSync } from 'node:fs';
import { createSecureServer } from 'node:http2';
import { join } from 'node:path';

const [port, dir, cert, key] = process.argv.slice(2);
const files = new Map(readdirSync(dir).map((name) => [`/${name}`, readFileSync(join(dir, name))]));
createSecureServer(
  { cert: readFileSync(cert), key: readFileSync(key), minVersion: 'TLSv1.3' },
  (req, res) => {
    const body = files.get(req.url);
    if (!body) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html', 'content-length': body.length });
    res.end(body);
  },
).listen(Number(port), '127.0.0.1');
