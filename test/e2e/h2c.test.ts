// HTTP/2 with prior knowledge (enableH2C) as a client behind a TLS-terminating balancer meets it:
// node:http2 connecting over plain TCP (and over a Unix socket) gets static files and a proxied
// node:http backend's answers, while HTTP/1.1 clients keep being served on the same port; without
// enableH2C the preface is what HTTP/1.1 makes of it, a 400.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import {
  connect as http2Connect,
  type ClientHttp2Session,
  type IncomingHttpHeaders,
} from 'node:http2';
import { connect as netConnect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { raw, request } from '../helpers/http.js';
import { startServer, type RunningServer } from '../helpers/server.js';

const dir = mkdtempSync(join(tmpdir(), 'portico-h2c-'));
const www = join(dir, 'www');
mkdirSync(www);
writeFileSync(join(www, 'index.html'), 'static over h2c');
const socket = join(dir, 'h2c.sock');
let backend: Server;
let s: RunningServer;

before(async () => {
  backend = createServer((req, res) => {
    res.setHeader('x-backend-saw', `${req.method} ${req.url} HTTP/${req.httpVersion}`);
    res.end(`proxied ${req.url}`);
  });
  backend.listen(0, '127.0.0.1');
  await once(backend, 'listening');
  const { port } = backend.address() as AddressInfo;
  s = await startServer(
    `global:\n  wwwroot: ${www}\n  enableH2C: true\n  loadModules: [rproxy]\nhosts:\n  - domain: localhost\n    locations:\n      - path: /api\n        proxyTo: http://127.0.0.1:${port}\n`,
    { listen: (p) => [`127.0.0.1:${p}`, `unix:${socket}`] as unknown as string },
  );
});

after(async () => {
  await s?.close();
  backend?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** One GET over an HTTP/2 session: status, headers and body. */
function get(
  session: ClientHttp2Session,
  path: string,
): Promise<{ headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':path': path, ':authority': 'localhost' });
    let body = '';
    let headers: IncomingHttpHeaders = {};
    stream.on('response', (h) => (headers = h));
    stream.setEncoding('utf8').on('data', (d: string) => (body += d));
    stream.on('end', () => resolve({ headers, body }));
    stream.on('error', reject);
  });
}

async function exchange(session: ClientHttp2Session): Promise<void> {
  try {
    const file = await get(session, '/index.html');
    assert.equal(file.headers[':status'], 200);
    assert.equal(file.body, 'static over h2c');
    const proxied = await get(session, '/api/thing?x=1');
    assert.equal(proxied.headers[':status'], 200);
    assert.equal(proxied.body, 'proxied /api/thing?x=1');
    assert.equal(proxied.headers['x-backend-saw'], 'GET /api/thing?x=1 HTTP/1.1');
    // Several streams at once on the one connection.
    const many = await Promise.all([1, 2, 3].map((n) => get(session, `/api/${n}`)));
    assert.deepEqual(
      many.map((r) => r.body),
      ['proxied /api/1', 'proxied /api/2', 'proxied /api/3'],
    );
  } finally {
    session.close();
  }
}

describe('enableH2C', () => {
  it('serves HTTP/2 with prior knowledge: static files and a proxied backend', async () => {
    await exchange(http2Connect(s.url));
  });

  it('serves HTTP/2 with prior knowledge over a Unix socket', async () => {
    await exchange(
      http2Connect('http://localhost', { createConnection: () => netConnect(socket) }),
    );
  });

  it('still serves HTTP/1.1 on the same port, a POST and a pipelined pair included', async () => {
    const file = await request(s.port, '/index.html');
    assert.deepEqual([file.status, file.text], [200, 'static over h2c']);
    const proxied = await request(s.port, '/api/post', {
      method: 'POST',
      body: 'x',
      headers: { host: 'localhost' },
    });
    assert.deepEqual([proxied.status, proxied.text], [200, 'proxied /api/post']);
    // A request that begins as the preface does ("PRI") until it differs is HTTP/1.1.
    const pipelined = await raw(
      s.port,
      'GET /index.html HTTP/1.1\r\nHost: a\r\n\r\nGET /index.html HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n',
    );
    assert.equal(pipelined.match(/HTTP\/1\.1 200 OK/g)?.length, 2, pipelined);
    const pri = await raw(s.port, 'PRI /x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n');
    assert.match(pri, /^HTTP\/1\.1 (400|405|501) /);
  });

  it('is off by default: the preface gets HTTP/1.1’s 400', async () => {
    const plain = await startServer(`global:\n  wwwroot: ${www}\n`);
    try {
      const answer = await raw(plain.port, 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
      assert.match(answer, /^HTTP\/1\.1 400 /);
    } finally {
      await plain.close();
    }
  });
});
