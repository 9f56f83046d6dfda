// Compression of what gateways and Python applications answer: a CGI script and a WSGI application
// (Python's standard library alone) send a 64 KiB HTML page, whole or piece by piece, and a client
// decodes it byte for byte; a static file beside them is compressed by the static files alone.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import zlib from 'node:zlib';
import { htmlPage } from '../helpers/html-page.js';
import { request } from '../helpers/http.js';
import { PYTHON } from '../helpers/python.js';
import { startServer } from '../helpers/server.js';

const PAGE = htmlPage(64 * 1024);
const SMALL = htmlPage(2048, 7);

const dir = mkdtempSync(join(tmpdir(), 'portico-compress-gw-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const www = join(dir, 'www');
mkdirSync(join(www, 'cgi-bin'), { recursive: true });
writeFileSync(join(dir, 'page.html'), PAGE);
writeFileSync(join(dir, 'small.html'), SMALL);
writeFileSync(join(www, 'static.html'), PAGE);
for (const [name, file] of [
  ['page.sh', 'page.html'],
  ['small.sh', 'small.html'],
]) {
  writeFileSync(
    join(www, 'cgi-bin', name!),
    `#!/bin/sh\nprintf "Content-Type: text/html\\r\\nETag: \\"cgi\\"\\r\\n\\r\\n"\ncat ${join(dir, file!)}\n`,
  );
  chmodSync(join(www, 'cgi-bin', name!), 0o755);
}
writeFileSync(
  join(dir, 'app.py'),
  `PAGE = open(${JSON.stringify(join(dir, 'page.html'))}, "rb").read()

def application(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/html; charset=utf-8")])
    if environ["PATH_INFO"] == "/pieces":
        return (PAGE[i:i + 4096] for i in range(0, len(PAGE), 4096))
    return [PAGE]
`,
);

const decoders = { br: zlib.brotliDecompressSync, gzip: zlib.gunzipSync };

async function decoded(port: number, path: string, coding: keyof typeof decoders) {
  const r = await request(port, path, { headers: { 'accept-encoding': coding } });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.headers['content-encoding'], coding, path);
  assert.equal(r.headers.vary, 'Accept-Encoding', path);
  assert.equal(r.headers['content-length'], undefined, path);
  return decoders[coding](r.body);
}

describe('dynamic compression: gateways and Python', () => {
  it('a CGI script’s page, streamed or whole, is coded; its ETag made weak', async (t) => {
    const s = await startServer(`global:\n  wwwroot: ${www}\n  loadModules: [cgi]\n`);
    t.after(() => s.close());
    for (const coding of ['br', 'gzip'] as const) {
      assert.deepEqual(await decoded(s.port, '/cgi-bin/page.sh', coding), PAGE);
      assert.deepEqual(await decoded(s.port, '/cgi-bin/small.sh', coding), SMALL);
    }
    const r = await request(s.port, '/cgi-bin/page.sh', { headers: { 'accept-encoding': 'br' } });
    assert.equal(r.headers.etag, 'W/"cgi"');
  });

  it('a static file beside them is compressed once, by the static files', async (t) => {
    const s = await startServer(`global:\n  wwwroot: ${www}\n  loadModules: [cgi]\n`);
    t.after(() => s.close());
    const r = await request(s.port, '/static.html', { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(r.headers['content-encoding'], 'gzip');
    // The static files' own variant: its length known, its tag theirs (not made weak).
    assert.equal(r.headers['content-length'], String(r.body.length));
    assert.match(String(r.headers.etag), /^"[^"]+-gzip"$/);
    assert.deepEqual(zlib.gunzipSync(r.body), PAGE);
  });

  it(
    'a WSGI application’s page, whole or in pieces, is coded',
    { skip: PYTHON === undefined && 'no python3' },
    async (t) => {
      const s = await startServer(
        `global:\n  loadModules: [wsgi]\n  pythonExecutable: ${PYTHON}\n  wsgiApplicationPath: ${join(dir, 'app.py')}\n`,
      );
      t.after(() => s.close());
      for (const coding of ['br', 'gzip'] as const) {
        assert.deepEqual(await decoded(s.port, '/whole', coding), PAGE);
        assert.deepEqual(await decoded(s.port, '/pieces', coding), PAGE);
      }
    },
  );
});
