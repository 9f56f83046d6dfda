// The cache in front of dynamic compression (`loadModules: [cache, rproxy]`): a coded response is
// stored as coded, once per coding chosen, and a hit is served as stored, never coded again; the
// origin is asked for the chosen coding alone; any number of distinct Accept-Encoding headers make
// at most one entry per coding.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { it, type TestContext } from 'node:test';
import zlib from 'node:zlib';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { htmlPage } from '../helpers/html-page.js';
import { request } from '../helpers/http.js';
import { startServer, type RunningServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';

const PAGE = htmlPage(64 * 1024);

interface Origin {
  readonly url: string;
  /** The Accept-Encoding of each request that reached it. */
  readonly asked: (string | undefined)[];
}

async function origin(t: TestContext): Promise<Origin> {
  const asked: (string | undefined)[] = [];
  const server = http.createServer((req, res) => {
    asked.push(req.headers['accept-encoding']);
    res.writeHead(200, {
      'Content-Type': 'text/html',
      'Content-Length': PAGE.length,
      'Cache-Control': 'max-age=600',
      ETag: '"v1"',
    });
    res.end(PAGE);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, asked };
}

function entries(s: RunningServer): number {
  const status = s.server.status() as { modules: { cache: { entries: number }[] } };
  return status.modules.cache[0]!.entries;
}

const get = (s: RunningServer, acceptEncoding?: string) =>
  request(
    s.port,
    '/page',
    acceptEncoding === undefined ? {} : { headers: { 'accept-encoding': acceptEncoding } },
  );

it('stores one coded variant per coding chosen and serves hits as stored', async (t) => {
  const o = await origin(t);
  const s = await startServer(`global:\n  loadModules: [cache, rproxy]\n  proxyTo: ${o.url}\n`);
  t.after(() => s.close());

  const miss = await get(s, 'gzip, deflate, br');
  assert.match(String(miss.headers['cache-status']), /fwd=uri-miss; fwd-status=200; stored/);
  assert.equal(miss.headers['content-encoding'], 'br');
  assert.equal(miss.headers['content-length'], undefined, 'coded as it streamed');
  assert.deepEqual(o.asked, ['br'], 'the origin is asked for the chosen coding alone');

  const hit = await get(s, 'br');
  assert.match(String(hit.headers['cache-status']), /^Portico; hit/);
  assert.equal(hit.headers['content-encoding'], 'br');
  assert.equal(hit.headers.etag, 'W/"v1"', 'made weak once, when coded');
  // The stored bytes, with their length: a hit is not coded again.
  assert.equal(hit.headers['content-length'], String(hit.body.length));
  assert.deepEqual(hit.body, miss.body);
  assert.deepEqual(zlib.brotliDecompressSync(hit.body), PAGE);

  const gzip = await get(s, 'gzip');
  assert.match(String(gzip.headers['cache-status']), /fwd=vary-miss/);
  assert.deepEqual(zlib.gunzipSync(gzip.body), PAGE);
  const plain = await get(s);
  assert.match(String(plain.headers['cache-status']), /fwd=vary-miss/);
  assert.equal(plain.headers['content-encoding'], undefined);
  assert.deepEqual(plain.body, PAGE);
  assert.deepEqual(o.asked, ['br', 'gzip', undefined]);
  assert.equal(entries(s), 3);

  // Every browser's and client's spelling of the same choice is a hit on the same entry.
  const spellings = [
    '*',
    'br;q=1.0, gzip;q=0.8',
    'gzip,br',
    'x-gzip',
    'GZIP',
    'identity',
    'br;q=0',
  ];
  for (let i = 0; i < 2000; i += 50) {
    const batch = Array.from({ length: 50 }, (_, j) => {
      const n = i + j;
      return get(s, `${spellings[n % spellings.length]}, x-unknown-${n};q=0.${n % 10}`);
    });
    for (const r of await Promise.all(batch)) {
      assert.equal(r.status, 200);
      assert.match(String(r.headers['cache-status']), /^Portico; hit/);
    }
  }
  assert.equal(o.asked.length, 3, 'no request more reached the origin');
  assert.equal(entries(s), 3, 'one entry per coding');
});

it('a validation’s 304 freshens the coded variant, which keeps its weak ETag and coded body', async (t) => {
  let validations = 0;
  const server = http.createServer((req, res) => {
    // A backend comparing weakly, as If-None-Match asks (RFC 9110 §13.1.2).
    if (req.headers['if-none-match']?.replace(/^W\//, '') === '"v2"') {
      validations++;
      return res.writeHead(304, { ETag: '"v2"', 'Cache-Control': 'max-age=0' }).end();
    }
    res.writeHead(200, { 'Content-Type': 'text/html', 'Cache-Control': 'max-age=0', ETag: '"v2"' });
    res.end(PAGE);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const s = await startServer(`global:\n  loadModules: [cache, rproxy]\n  proxyTo: ${url}\n`);
  t.after(() => s.close());
  const first = await get(s, 'gzip');
  const again = await get(s, 'gzip');
  assert.equal(validations, 1);
  assert.match(String(again.headers['cache-status']), /fwd-status=304/);
  assert.equal(again.headers['content-encoding'], 'gzip');
  assert.equal(again.headers.etag, 'W/"v2"');
  assert.deepEqual(again.body, first.body);
  assert.deepEqual(zlib.gunzipSync(again.body), PAGE);
});

it('static files choosing a precompressed copy keep the whole Accept-Encoding as their key', async (t) => {
  // Only a .gz beside the file (gzip_static's usual layout): a browser asking for br and gzip
  // gets it; a client taking br alone must never get that stored gzip.
  const dir = mkdtempSync(join(tmpdir(), 'portico-precompressed-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'app.js'), PAGE);
  writeFileSync(join(dir, 'app.js.gz'), zlib.gzipSync(PAGE));
  const s = await startServer(`global:\n  loadModules: [cache]\n  wwwroot: ${dir}\n`);
  t.after(() => s.close());
  const asked = (acceptEncoding: string) =>
    request(s.port, '/app.js', { headers: { 'accept-encoding': acceptEncoding } });
  assert.equal((await asked('gzip, deflate, br')).headers['content-encoding'], 'gzip');
  assert.equal((await asked('gzip, deflate, br')).headers['content-encoding'], 'gzip');
  assert.notEqual((await asked('br')).headers['content-encoding'], 'gzip');
  assert.notEqual((await asked('br, gzip;q=0')).headers['content-encoding'], 'gzip');
});

it('a background revalidation through a cache inside the compression keeps the stored copy coded', async (t) => {
  // [cgi, cache, rproxy]: compression wraps cgi to rproxy, the cache sits inside it, and a stale
  // entry is validated by a copy of the request in the background.
  const dir = mkdtempSync(join(tmpdir(), 'portico-inside-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  let validations = 0;
  const server = http.createServer((req, res) => {
    const fields = {
      'Content-Type': 'text/html',
      'Cache-Control': 'max-age=0, stale-while-revalidate=600',
      ETag: '"v1"',
    };
    if (req.headers['if-none-match'] !== undefined) {
      validations++;
      res.writeHead(304, fields);
      res.end();
    } else {
      res.writeHead(200, { ...fields, 'Content-Length': PAGE.length });
      res.end(PAGE);
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const s = await startServer(
    `global:\n  wwwroot: ${dir}\n  loadModules: [cgi, cache, rproxy]\n  proxyTo: ${url}\n`,
  );
  t.after(() => s.close());
  const br = () => request(s.port, '/page', { headers: { 'accept-encoding': 'br' } });
  assert.equal((await br()).headers.etag, 'W/"v1"');
  // Stale at once: served as stored, validated behind it; the 304 freshens the coded copy.
  assert.match(String((await br()).headers['cache-status']), /stale-while-revalidate/);
  await until(() => validations, { ok: (n) => n > 0, what: 'the background validation' });
  const hit = await br();
  assert.match(String(hit.headers['cache-status']), /; hit/);
  assert.equal(hit.headers.etag, 'W/"v1"');
  assert.equal(hit.headers['content-encoding'], 'br');
  assert.equal(zlib.brotliDecompressSync(hit.body).toString(), PAGE.toString());
});
