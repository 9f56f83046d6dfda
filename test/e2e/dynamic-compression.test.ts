// Compression of proxied responses as clients meet it: a real node:http backend behind `rproxy`,
// decoded by real clients (curl --compressed, fetch, node:http2), byte for byte; what is left as it
// is; a streamed response reaching the client piece by piece; the access log counting coded bytes.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { connect as http2Connect } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { ZSTD } from '../../src/http/zstd.js';
import { htmlPage } from '../helpers/html-page.js';
import { request } from '../helpers/http.js';
import { freePort, startServer, type RunningServer } from '../helpers/server.js';
import { SERVER_CERT, SERVER_KEY, TEST_CA } from '../helpers/tls.js';
import { until } from '../helpers/wait.js';

const PAGE = htmlPage(64 * 1024);
const GZIPPED = zlib.gzipSync(PAGE);
const run = promisify(execFile);
const CURL = spawnSync('curl', ['--version'], { encoding: 'utf8' });
const curlDecodes = (coding: string) => CURL.status === 0 && CURL.stdout.includes(coding);
if (process.env.CI && !curlDecodes('brotli')) throw new Error('CI needs curl with brotli');

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** The backend's answers by path; each page is the 64 KiB one unless said. */
const ROUTES: Record<string, Handler> = {
  '/page': (req, res) => {
    if (req.headers['if-none-match'] === '"page-1"')
      return res.writeHead(304, { ETag: '"page-1"' }).end();
    // A backend that does ranges answers one with 206 and the bytes asked for.
    const range = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
    if (range) {
      const [start, end] = [Number(range[1]), Number(range[2])];
      res.writeHead(206, {
        'Content-Type': 'text/html',
        'Content-Range': `bytes ${start}-${end}/${PAGE.length}`,
      });
      return res.end(PAGE.subarray(start, end + 1));
    }
    res.writeHead(200, {
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Length': PAGE.length,
      ETag: '"page-1"',
      Vary: 'Cookie',
    });
    res.end(req.method === 'HEAD' ? undefined : PAGE);
  },
  '/encoded': (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html', 'Content-Encoding': 'gzip' });
    res.end(GZIPPED);
  },
  '/no-transform': (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html', 'Cache-Control': 'no-transform' });
    res.end(PAGE);
  },
  '/small': (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html', 'Content-Length': 300 });
    res.end(PAGE.subarray(0, 300));
  },
  '/image': (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'image/png' });
    res.end(PAGE);
  },
  '/events': (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    res.end(PAGE);
  },
};

async function backend(t: TestContext, extra: Record<string, Handler> = {}): Promise<string> {
  const server = http.createServer((req, res) => {
    const route = { ...ROUTES, ...extra }[req.url ?? ''];
    if (route) return route(req, res);
    res.writeHead(404).end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function proxy(t: TestContext, url: string, extra = ''): Promise<RunningServer> {
  const s = await startServer(`global:\n  loadModules: [rproxy]\n  proxyTo: ${url}\n${extra}`);
  t.after(() => s.close());
  return s;
}

describe('dynamic compression: proxied responses', () => {
  for (const coding of ['gzip', 'br'] as const) {
    it(`curl --compressed decodes a 64 KiB page sent as ${coding}, byte for byte; the log counts coded bytes`, async (t) => {
      if (!curlDecodes(coding === 'br' ? 'brotli' : 'libz'))
        return t.skip(`no curl that decodes ${coding}`);
      const dir = mkdtempSync(join(tmpdir(), 'portico-compress-'));
      t.after(() => rmSync(dir, { recursive: true, force: true }));
      const log = join(dir, 'access.log');
      const s = await proxy(t, await backend(t), `  logFilePath: ${log}\n`);
      const size = await run('curl', [
        '-s',
        '--compressed',
        '-H',
        `Accept-Encoding: ${coding}`,
        '-D',
        join(dir, 'head'),
        '-o',
        join(dir, 'body'),
        '-w',
        '%{size_download}',
        `${s.url}/page`,
      ]);
      assert.deepEqual(readFileSync(join(dir, 'body')), PAGE);
      const head = readFileSync(join(dir, 'head'), 'utf8').toLowerCase();
      assert.match(head, new RegExp(`^content-encoding: ${coding}\\r$`, 'm'));
      assert.match(head, /^vary: cookie, accept-encoding\r$/m);
      assert.match(head, /^etag: w\/"page-1"\r$/m);
      assert.match(head, /^transfer-encoding: chunked\r$/m);
      assert.doesNotMatch(head, /^content-length:/m);
      const coded = Number(size.stdout);
      assert.ok(coded < PAGE.length / 2, `${coded} bytes for ${PAGE.length}`);
      // The access log's size is what went out, as nginx's $body_bytes_sent.
      const line = await until(() => readFileSync(log, 'utf8'), { ok: (l) => l.includes('/page') });
      assert.match(line, new RegExp(`"GET /page HTTP/1.1" 200 ${coded} `));
    });
  }

  it('fetch decodes it too', async (t) => {
    const s = await proxy(t, await backend(t));
    const res = await fetch(`${s.url}/page`);
    assert.match(res.headers.get('content-encoding') ?? '', /^(br|gzip)$/);
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), PAGE);
  });

  it('zstd where this Node has it, the page as it is where it has not', async (t) => {
    const s = await proxy(t, await backend(t));
    const r = await request(s.port, '/page', { headers: { 'accept-encoding': 'zstd' } });
    assert.equal(r.headers.vary, 'Cookie, Accept-Encoding');
    if (ZSTD === undefined) {
      assert.equal(r.headers['content-encoding'], undefined);
      assert.deepEqual(r.body, PAGE);
      return;
    }
    assert.equal(r.headers['content-encoding'], 'zstd');
    const decompress = (zlib as unknown as { zstdDecompressSync(b: Buffer): Buffer })
      .zstdDecompressSync;
    assert.deepEqual(decompress(r.body), PAGE);
  });

  it('an HTTP/2 client gets it coded, without content-length', async (t) => {
    const sport = await freePort();
    const s = await proxy(
      t,
      await backend(t),
      `  secure: true\n  sport: "127.0.0.1:${sport}"\n  cert: ${SERVER_CERT}\n  key: ${SERVER_KEY}\n`,
    );
    assert.ok(s);
    const session = http2Connect(`https://localhost:${sport}`, { ca: TEST_CA });
    t.after(() => session.close());
    const stream = session.request({ ':path': '/page', 'accept-encoding': 'br' });
    const chunks: Buffer[] = [];
    stream.on('data', (d: Buffer) => chunks.push(d));
    const [headers] = (await once(stream, 'response')) as [http.IncomingHttpHeaders];
    await once(stream, 'end');
    assert.equal(headers[':status'], 200);
    assert.equal(headers['content-encoding'], 'br');
    assert.equal(headers['content-length'], undefined);
    assert.equal(headers.etag, 'W/"page-1"');
    assert.deepEqual(zlib.brotliDecompressSync(Buffer.concat(chunks)), PAGE);
  });

  it('leaves alone what is coded already, no-transform, small, an image, events, a range, HEAD and 304', async (t) => {
    const s = await proxy(t, await backend(t));
    const get = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
      request(s.port, path, { method, headers: { 'accept-encoding': 'gzip, br', ...headers } });

    const encoded = await get('/encoded');
    assert.equal(encoded.headers['content-encoding'], 'gzip');
    assert.deepEqual(encoded.body, GZIPPED, 'the backend’s own coding, not coded again');
    for (const path of ['/no-transform', '/small', '/image', '/events']) {
      const r = await get(path);
      assert.equal(r.headers['content-encoding'], undefined, path);
      assert.equal(r.headers.vary, undefined, path);
      assert.ok(PAGE.subarray(0, r.body.length).equals(r.body), path);
    }
    const range = await get('/page', { range: 'bytes=100-199' });
    assert.equal(range.status, 206);
    assert.equal(range.headers['content-encoding'], undefined);
    assert.deepEqual(range.body, PAGE.subarray(100, 200));
    const head = await get('/page', {}, 'HEAD');
    assert.equal(head.headers['content-encoding'], undefined);
    assert.equal(head.headers['content-length'], String(PAGE.length));
    const notModified = await get('/page', { 'if-none-match': '"page-1"' });
    assert.equal(notModified.status, 304);
    assert.equal(notModified.headers.etag, 'W/"page-1"', 'the validator its 200 carries');
    assert.equal(notModified.body.length, 0);
  });

  it('a client that takes no coding gets the page as it is, with Vary and its length', async (t) => {
    const s = await proxy(t, await backend(t));
    const r = await request(s.port, '/page');
    assert.equal(r.headers['content-encoding'], undefined);
    assert.equal(r.headers['content-length'], String(PAGE.length));
    assert.equal(r.headers.vary, 'Cookie, Accept-Encoding');
    assert.equal(r.headers.etag, '"page-1"');
    assert.deepEqual(r.body, PAGE);
  });

  it('with enableCompression off nothing is coded', async (t) => {
    const s = await proxy(t, await backend(t), '  enableCompression: false\n');
    const r = await request(s.port, '/page', { headers: { 'accept-encoding': 'gzip, br' } });
    assert.equal(r.headers['content-encoding'], undefined);
    assert.equal(r.headers.vary, 'Cookie');
    assert.deepEqual(r.body, PAGE);
  });

  it('streams: each piece reaches the client decoded while the backend is still answering', async (t) => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let ended = false;
    const pieces = [PAGE.subarray(0, 4000), PAGE.subarray(4000, 9000)];
    const url = await backend(t, {
      '/live': (_req, res) => {
        res.writeHead(200, { 'Content-Type': 'text/html' });
        res.write(pieces[0]);
        void released.then(() => {
          ended = true;
          res.end(pieces[1]);
        });
      },
    });
    const s = await proxy(t, url);
    const req = http.get({
      host: '127.0.0.1',
      port: s.port,
      path: '/live',
      headers: { 'accept-encoding': 'gzip' },
    });
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    assert.equal(res.headers['content-encoding'], 'gzip');
    const decoded = res.pipe(zlib.createGunzip());
    const got: Buffer[] = [];
    let first!: () => void;
    const firstPiece = new Promise<void>((resolve) => (first = resolve));
    decoded.on('data', (d: Buffer) => {
      got.push(d);
      if (Buffer.concat(got).length >= pieces[0]!.length) first();
    });
    await firstPiece;
    assert.equal(ended, false, 'the first piece came before the backend ended');
    assert.deepEqual(Buffer.concat(got), pieces[0]);
    release();
    await once(decoded, 'end');
    assert.deepEqual(Buffer.concat(got), PAGE.subarray(0, 9000));
  });
});
