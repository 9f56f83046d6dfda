// The baseline of bench/static.sh: the least a Node server can do for a static file — every file
// of a directory read into memory at start, answered by path with Content-Type and Content-Length.
// A missing file gets a small 404 page, as a real server sends. With `static-head`, a file's
// response carries the head a static file server sends (Portico's, nginx's: Accept-Ranges,
// Last-Modified, ETag, Vary, Server), built once per file, and the 404 a Server field: what
// node:http costs for those fields alone, apart from any server's own work.
// Usage: node bench/minimal-server.mjs PORT DIR [static-head]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';

const [port, dir, head] = process.argv.slice(2);
const full = head === 'static-head';
const files = new Map(
  readdirSync(dir).map((name) => {
    const body = readFileSync(join(dir, name));
    if (!full) return [`/${name}`, { body, fields: undefined }];
    const { mtime, size } = statSync(join(dir, name));
    const fields = {
      'Content-Type': 'text/html',
      'Content-Length': body.length,
      'Accept-Ranges': 'bytes',
      'Last-Modified': mtime.toUTCString(),
      ETag: `"${size.toString(16)}-${mtime.getTime().toString(16)}"`,
      Vary: 'Accept-Encoding',
      Server: 'minimal',
    };
    return [`/${name}`, { body, fields }];
  }),
);
const notFound = Buffer.from('<!doctype html><title>404 Not Found</title><h1>404 Not Found</h1>');
const notFoundFields = full
  ? { 'Content-Type': 'text/html', 'Content-Length': notFound.length, Server: 'minimal' }
  : undefined;
createServer((req, res) => {
  const file = files.get(req.url);
  if (!file) {
    res.writeHead(
      404,
      notFoundFields ?? { 'Content-Type': 'text/html', 'Content-Length': notFound.length },
    );
    res.end(notFound);
    return;
  }
  res.writeHead(
    200,
    file.fields ?? { 'Content-Type': 'text/html', 'Content-Length': file.body.length },
  );
  res.end(file.body);
}).listen(Number(port), '127.0.0.1');
