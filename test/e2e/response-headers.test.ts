// setHeaders and removeHeaders beside customHeaders, on every kind of response Portico sends: one
// proxied from a real node:http backend that names itself (`Server`, `X-Powered-By`), a cached
// one, a static file (its head kept once per set of rules), an error page, a redirect and a CGI
// script's answer, over HTTP/1.1 (node:http) and HTTP/2 (node:http2, TLS). Order: removeHeaders,
// then setHeaders, then customHeaders where absent; `{path}` filled in per request.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http, { type IncomingHttpHeaders } from 'node:http';
import { connect as http2Connect, type ClientHttp2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { request } from '../helpers/http.js';
import { freePort, startServer, type RunningServer } from '../helpers/server.js';
import { SERVER_CERT, SERVER_KEY, TEST_CA } from '../helpers/tls.js';

const root = mkdtempSync(join(tmpdir(), 'portico-headers-'));
const www = join(root, 'www');
mkdirSync(join(www, 'cgi-bin'), { recursive: true });
mkdirSync(join(www, 'kept'));
mkdirSync(join(www, 'dir'));
writeFileSync(join(www, 'hello.txt'), 'hello');
writeFileSync(join(www, 'kept', 'a.txt'), 'kept file');
writeFileSync(
  join(www, 'cgi-bin', 'powered.sh'),
  [
    '#!/bin/sh',
    'printf "Content-Type: text/plain\\r\\nX-Powered-By: PHP/8.2\\r\\nX-Script: yes\\r\\n\\r\\ncgi body"',
    '',
  ].join('\n'),
);
chmodSync(join(www, 'cgi-bin', 'powered.sh'), 0o755);

let backend: http.Server;
let backendUrl: string;
let s: RunningServer;
let sport: number;

before(async () => {
  backend = http.createServer((req, res) => {
    res.writeHead(200, {
      'Content-Type': 'text/plain',
      Server: 'backend/1.0',
      'X-Powered-By': 'Express',
      'X-Backend': 'yes',
      'Cache-Control': 'private',
    });
    res.end(`backend saw ${req.url}`);
  });
  backend.listen(0, '127.0.0.1');
  await once(backend, 'listening');
  backendUrl = `http://127.0.0.1:${(backend.address() as AddressInfo).port}`;
  sport = await freePort();
  s = await startServer(`
global:
  sport: "127.0.0.1:${sport}"
  secure: true
  disableToHTTPSRedirect: true
  cert: ${SERVER_CERT}
  key: ${SERVER_KEY}
  loadModules: [rproxy, cgi]
  wwwroot: ${www}
  removeHeaders: [X-Powered-By, Server]
  setHeaders:
    X-Frame-Options: DENY
    X-Where: "{path}"
  customHeaders:
    X-Custom: added
    X-Frame-Options: ignored, as setHeaders has it
hosts:
  - domain: localhost
    wwwroot: ${www}
    locations:
      - path: /api
        proxyTo: ${backendUrl}
        setHeaders:
          Cache-Control: no-store
      - path: /kept
        setHeaders:
          x-where: fixed
          x-frame-options: SAMEORIGIN
`);
});

after(async () => {
  await s?.close();
  backend.closeAllConnections();
  await new Promise((resolve) => backend.close(resolve));
  rmSync(root, { recursive: true, force: true });
});

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

const h1 = async (path: string): Promise<Answer> => {
  const r = await request(s.port, path, { headers: { host: 'localhost' } });
  return { status: r.status, headers: r.headers, body: r.text };
};

let session: ClientHttp2Session | undefined;
const h2 = (path: string): Promise<Answer> =>
  new Promise((resolve, reject) => {
    session ??= http2Connect(`https://localhost:${sport}`, { ca: TEST_CA });
    const stream = session.request({ ':path': path }, { endStream: true });
    const chunks: Buffer[] = [];
    let head: IncomingHttpHeaders = {};
    stream.on('response', (h) => (head = h));
    stream.on('data', (d: Buffer) => chunks.push(d));
    stream.on('end', () =>
      resolve({
        status: Number(head[':status']),
        headers: head,
        body: Buffer.concat(chunks).toString(),
      }),
    );
    stream.on('error', reject);
  });
after(() => session?.close());

/** What every response of the global and host rules carries. */
function assertRules(r: Answer, path: string, what: string): void {
  assert.equal(r.headers['server'], undefined, `${what}: Server removed`);
  assert.equal(r.headers['x-powered-by'], undefined, `${what}: X-Powered-By removed`);
  assert.equal(r.headers['x-frame-options'], 'DENY', `${what}: set, customHeaders' passed by`);
  assert.equal(r.headers['x-where'], path, `${what}: {path} filled in`);
  assert.equal(r.headers['x-custom'], 'added', `${what}: customHeaders added`);
  assert.equal(typeof r.headers['date'], 'string', `${what}: Date kept`);
}

for (const [protocol, get] of [
  ['HTTP/1.1', h1],
  ['HTTP/2', h2],
] as const) {
  describe(`setHeaders and removeHeaders over ${protocol}`, () => {
    it('a proxied response: the backend’s Server and X-Powered-By removed, others set, its own fields kept', async () => {
      const r = await get('/api/thing?x=1');
      assert.equal(r.status, 200);
      assert.equal(r.body, 'backend saw /api/thing?x=1');
      assertRules(r, '/api/thing', 'proxied');
      assert.equal(r.headers['x-backend'], 'yes');
      assert.equal(r.headers['cache-control'], 'no-store', 'the location’s setHeaders replaced it');
    });

    it('a static file, its head kept per set of rules: each location gets its own', async () => {
      for (let i = 0; i < 3; i++) {
        const file = await get('/hello.txt');
        assert.equal(file.body, 'hello');
        assertRules(file, '/hello.txt', 'static');
        assert.equal(typeof file.headers['etag'], 'string');
        const kept = await get('/kept/a.txt');
        assert.equal(kept.body, 'kept file');
        assert.equal(kept.headers['x-where'], 'fixed', 'the location’s value, whatever the case');
        assert.equal(kept.headers['x-frame-options'], 'SAMEORIGIN');
        assert.equal(kept.headers['x-custom'], 'added');
        assert.equal(kept.headers['server'], undefined);
      }
    });

    it('an error page and a redirect', async () => {
      const missing = await get('/missing');
      assert.equal(missing.status, 404);
      assertRules(missing, '/missing', 'error');
      const redirect = await get('/dir');
      assert.equal(redirect.status, 301);
      assert.equal(redirect.headers['location'], '/dir/');
      assertRules(redirect, '/dir', 'redirect');
    });

    it('a CGI script’s response', async () => {
      const r = await get('/cgi-bin/powered.sh');
      assert.equal(r.status, 200);
      assert.equal(r.body, 'cgi body');
      assertRules(r, '/cgi-bin/powered.sh', 'CGI');
      assert.equal(r.headers['x-script'], 'yes');
    });
  });
}

describe('setHeaders and removeHeaders on a cached response', () => {
  it('applies them to the stored response each time it is served, not to what is stored', async () => {
    let calls = 0;
    const origin = http.createServer((_req, res) => {
      calls++;
      res.writeHead(200, {
        'Cache-Control': 'max-age=60',
        'X-Powered-By': 'Express',
        'Content-Type': 'text/plain',
      });
      res.end('cacheable');
    });
    origin.listen(0, '127.0.0.1');
    await once(origin, 'listening');
    const url = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
    const c = await startServer(`
global:
  loadModules: [cache, rproxy]
  proxyTo: ${url}
  removeHeaders: X-Powered-By
  setHeaders:
    X-Served: "{path}"
`);
    try {
      const first = await request(c.port, '/c', { headers: { host: 'localhost' } });
      const second = await request(c.port, '/c', { headers: { host: 'localhost' } });
      assert.equal(calls, 1, 'the second came from the cache');
      assert.match(String(second.headers['cache-status']), /hit/);
      for (const r of [first, second]) {
        assert.equal(r.text, 'cacheable');
        assert.equal(r.headers['x-powered-by'], undefined);
        assert.equal(r.headers['x-served'], '/c');
        assert.equal(r.headers['cache-control'], 'max-age=60');
      }
    } finally {
      await c.close();
      origin.closeAllConnections();
      await new Promise((resolve) => origin.close(resolve));
    }
  });
});
