// The baseline of bench/static.sh: the least a Node server can do for a static file — every file
// of a directory read into memory at start, answered by path with Content-Type and Content-Length.
// A missing file gets a small 404 page, as a real server sends. Usage: node bench/minimal-server.mjs
// PORT DIR
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';

const [port, dir] = process.argv.slice(2);
const files = new Map(readdirSync(dir).map((name) => [`/${name}`, readFileSync(join(dir, name))]));
const notFound = Buffer.from('<!doctype html><title>404 Not Found</title><h1>404 Not Found</h1>');
createServer((req, res) => {
  const body = files.get(req.url);
  if (!body) {
    res.writeHead(404, { 'Content-Type': 'text/html', 'Content-Length': notFound.length });
    res.end(notFound);
    return;
  }
  res.writeHead(200, { 'Content-Type': 'text/html', 'Content-Length': body.length });
  res.end(body);
}).listen(Number(port), '127.0.0.1');
