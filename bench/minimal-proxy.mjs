// The ceiling of a Node reverse proxy here: node:http in, undici's Pool.stream out, nothing else
// (no header filtering, no X-Forwarded-*, no error pages). Usage: node minimal-proxy.mjs PORT ORIGIN
import http from 'node:http';
import { Pool } from 'undici';

const [port, origin] = process.argv.slice(2);
const pool = new Pool(origin, { connections: 128 });
http
  .createServer((req, res) => {
    pool.stream(
      { path: req.url, method: req.method, headers: req.headers, opaque: res },
      ({ statusCode, headers, opaque }) => {
        opaque.writeHead(statusCode, headers);
        return opaque;
      },
      (err) => {
        if (err && !res.headersSent) res.writeHead(502).end();
      },
    );
  })
  .listen(Number(port), '127.0.0.1');
