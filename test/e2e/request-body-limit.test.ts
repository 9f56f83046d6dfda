// `maximumRequestBodySize` as clients meet it: a declared length past the bound is refused before
// any of the body is read, a chunked one the moment it passes it, on the way to a real backend and
// to static files; bodies within it pass whole.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { connect as http2Connect } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { curl } from '../helpers/curl.js';
import { request } from '../helpers/http.js';
import { freePort, startServer, type RunningServer } from '../helpers/server.js';
import { SERVER_CERT, SERVER_KEY, TEST_CA } from '../helpers/tls.js';

const LIMIT = 1000;

describe('maximumRequestBodySize', () => {
  let backend: Server;
  let s: RunningServer;
  let received: number[] = [];
  let sport: number;
  before(async () => {
    // Answers with the length of the body it read whole.
    backend = createServer((req, res) => {
      let n = 0;
      req.on('data', (c: Buffer) => (n += c.length));
      req.on('end', () => {
        received.push(n);
        res.end(`got ${n}`);
      });
      req.on('error', () => undefined);
    });
    backend.listen(0, '127.0.0.1');
    await once(backend, 'listening');
    const port = (backend.address() as AddressInfo).port;
    sport = await freePort();
    s = await startServer(
      `global:\n  maximumRequestBodySize: ${LIMIT}\n  loadModules: [rproxy]\n  proxyTo: http://127.0.0.1:${port}/\n` +
        `  secure: true\n  disableToHTTPSRedirect: true\n  sport: "127.0.0.1:${sport}"\n  cert: ${SERVER_CERT}\n  key: ${SERVER_KEY}\n`,
    );
  });
  after(async () => {
    await s?.close();
    backend?.closeAllConnections();
    backend?.close();
  });

  const status = async (args: string[]) =>
    (
      await curl(
        ['-s', '-o', '/dev/null', '-w', '%{http_code}', ...args, `${s.url}/up`],
        'x'.repeat(LIMIT + 1),
      )
    ).stdout;

  it('refuses a declared length past the bound before reading it, and does not keep the connection', async () => {
    received = [];
    const r = await request(s.port, '/up', { method: 'POST', body: 'x'.repeat(LIMIT + 1) });
    assert.equal(r.status, 413);
    assert.equal(r.headers.connection, 'close');
    assert.deepEqual(received, [], 'the backend was never asked');
    assert.equal(await status(['--data-binary', '@-']), '413');
  });

  it('refuses a chunked body the moment it passes the bound', async () => {
    assert.equal(await status(['-H', 'Transfer-Encoding: chunked', '--data-binary', '@-']), '413');
    const r = await request(s.port, '/up', {
      method: 'POST',
      headers: { 'transfer-encoding': 'chunked' },
      body: 'x'.repeat(10 * LIMIT),
    });
    assert.equal(r.status, 413);
    assert.ok(
      received.every((n) => n <= LIMIT),
      `the backend got at most the bound: ${received}`,
    );
  });

  it('over HTTP/2: a body without content-length passes within the bound, and gets 413 past it', async () => {
    const session = http2Connect(`https://localhost:${sport}`, {
      ca: TEST_CA,
      host: '127.0.0.1',
    } as never);
    session.on('error', () => undefined);
    const post = (size: number) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const stream = session.request({ ':method': 'POST', ':path': '/up' });
        let status = 0;
        let body = '';
        stream.on('response', (h) => (status = Number(h[':status'])));
        stream.setEncoding('utf8').on('data', (d: string) => (body += d));
        stream.on('end', () => resolve({ status, body }));
        stream.on('error', reject);
        stream.end(Buffer.alloc(size, 'z'));
      });
    try {
      assert.deepEqual(await post(LIMIT), { status: 200, body: `got ${LIMIT}` });
      assert.equal((await post(LIMIT + 1)).status, 413);
    } finally {
      session.close();
    }
  });

  it('passes bodies within the bound whole, declared or chunked', async () => {
    const declared = await request(s.port, '/up', { method: 'POST', body: 'y'.repeat(LIMIT) });
    assert.equal(declared.text, `got ${LIMIT}`);
    const chunked = await request(s.port, '/up', {
      method: 'POST',
      headers: { 'transfer-encoding': 'chunked' },
      body: 'y'.repeat(LIMIT),
    });
    assert.equal(chunked.text, `got ${LIMIT}`);
  });
});
