// The reverse proxy as users meet it: real node:http(s) backends on 127.0.0.1, real clients
// (node:http, node:http2, raw sockets), Portico in between (REFERENCE §14, CONTRACT point 10).
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { connect as http2Connect } from 'node:http2';
import { createServer as createHttpsServer } from 'node:https';
import { connect as netConnect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { hashPassword } from '../../src/auth/password.js';
import { runServing } from '../helpers/cli.js';
import { blackhole } from '../helpers/blackhole.js';
import { request, uploadThenAsk } from '../helpers/http.js';
import { freePort, type RunningServer, type StartOptions, startServer } from '../helpers/server.js';
import { SERVER_CERT, SERVER_KEY, TEST_CA, TEST_CA_FILE } from '../helpers/tls.js';
import { until } from '../helpers/wait.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

interface Backend {
  readonly port: number;
  readonly url: string;
  /** Requests as the backend saw them. */
  readonly seen: {
    method: string;
    url: string;
    headers: http.IncomingHttpHeaders;
    rawHeaders: string[];
  }[];
}

/** Portico with this configuration (the helper adds the port), stopped when the test ends. */
async function proxy(
  t: TestContext,
  yaml: string,
  options: StartOptions = {},
): Promise<RunningServer> {
  const s = await startServer(yaml, options);
  t.after(() => s.close());
  return s;
}

/** A backend on 127.0.0.1, closed when the test ends. */
async function backend(t: TestContext, handler: Handler, secure = false): Promise<Backend> {
  const seen: Backend['seen'] = [];
  const wrapped: Handler = (req, res) => {
    seen.push({
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      rawHeaders: req.rawHeaders,
    });
    handler(req, res);
  };
  const server = secure
    ? createHttpsServer({ cert: readFileSync(SERVER_CERT), key: readFileSync(SERVER_KEY) }, wrapped)
    : http.createServer(wrapped);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `${secure ? 'https://localhost' : 'http://127.0.0.1'}:${port}`,
    seen,
  };
}

/** Echoes what it received: method, URL, headers, the body's length and digest. */
const echo: Handler = (req, res) => {
  const hash = createHash('sha256');
  let length = 0;
  req.on('data', (c: Buffer) => {
    hash.update(c);
    length += c.length;
  });
  req.on('end', () => {
    const body = JSON.stringify({
      method: req.method,
      url: req.url,
      headers: req.headers,
      length,
      sha256: hash.digest('hex'),
    });
    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(body),
    });
    res.end(body);
  });
};

function proxyConfig(proxyTo: string | string[], extra = ''): string {
  const list = (Array.isArray(proxyTo) ? proxyTo : [proxyTo]).map((u) => `      - ${u}\n`).join('');
  return `global:\n  loadModules: [rproxy]\n${extra}hosts:\n  - domain: localhost\n    proxyTo:\n${list}`;
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('rproxy: the request a backend receives', () => {
  it('joins the base path, drops the base query, sets Host and X-Forwarded-*, strips hop-by-hop fields', async (t) => {
    const b = await backend(t, echo);
    const s = await proxy(t, proxyConfig(`${b.url}/app/?secret=1`));
    const r = await request(s.port, '/x/y?q=1', {
      headers: {
        host: 'LocalHost',
        'x-forwarded-for': '6.6.6.6',
        'x-forwarded-host': 'evil.example',
        'x-forwarded-proto': 'https',
        connection: 'keep-alive, x-private',
        'x-private': 'hop',
        'keep-alive': 'timeout=5',
        te: 'trailers',
        'proxy-connection': 'keep-alive',
        'x-end-to-end': 'kept',
      },
    });
    assert.equal(r.status, 200);
    const got = JSON.parse(r.text) as { url: string; headers: Record<string, string> };
    assert.equal(got.url, '/app/x/y?q=1');
    assert.equal(got.headers.host, `127.0.0.1:${b.port}`);
    assert.equal(got.headers['x-forwarded-for'], '127.0.0.1');
    assert.equal(got.headers['x-forwarded-proto'], 'http');
    assert.equal(got.headers['x-forwarded-host'], 'localhost');
    assert.equal(got.headers['x-end-to-end'], 'kept');
    // The one TE that passes: the client takes trailers, which the proxy relays.
    assert.equal(got.headers.te, 'trailers');
    for (const name of ['x-private', 'keep-alive', 'proxy-connection'])
      assert.equal(got.headers[name], undefined, name);
    assert.equal(r.headers.server, 'Portico');
  });

  it('sends no X-Forwarded-* at all with disableProxyXForwarded, not even the client’s', async (t) => {
    const b = await backend(t, echo);
    const s = await proxy(t, proxyConfig(b.url, '  disableProxyXForwarded: true\n'));
    const r = await request(s.port, '/', {
      headers: {
        host: 'localhost',
        'x-forwarded-for': '6.6.6.6',
        'x-forwarded-host': 'evil',
        'x-forwarded-proto': 'https',
      },
    });
    const got = JSON.parse(r.text) as { headers: Record<string, string> };
    for (const name of ['x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto'])
      assert.equal(got.headers[name], undefined, name);
  });

  it('never lets Transfer-Encoding with Content-Length reach the backend as two requests', async (t) => {
    const b = await backend(t, echo);
    const s = await proxy(t, proxyConfig(b.url));
    const socket = netConnect(s.port, '127.0.0.1');
    await once(socket, 'connect');
    const smuggled = 'GET /admin HTTP/1.1\r\nHost: localhost\r\n\r\n';
    socket.write(
      `POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: ${4 + smuggled.length}\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${smuggled}`,
    );
    let answer = '';
    let closed = false;
    socket.setEncoding('utf8').on('data', (d: string) => (answer += d));
    socket.on('close', () => (closed = true));
    await until(() => closed, { what: 'the server closing the connection' });
    assert.match(answer, /^HTTP\/1\.1 400/);
    assert.equal(b.seen.filter((r) => r.url === '/admin').length, 0);
  });
});

describe('rproxy: bodies', () => {
  it('carries 10 MB up and down intact, fixed-length and chunked', async (t) => {
    const big = randomBytes(10 * 1024 * 1024);
    const b = await backend(t, (req, res) => {
      if (req.url === '/down-fixed') {
        res.writeHead(200, { 'Content-Length': big.length });
        return void res.end(big);
      }
      if (req.url === '/down-chunked') {
        res.writeHead(200);
        for (let i = 0; i < big.length; i += 1 << 20) res.write(big.subarray(i, i + (1 << 20)));
        return void res.end();
      }
      echo(req, res);
    });
    const s = await proxy(t, proxyConfig(b.url));
    for (const path of ['/down-fixed', '/down-chunked']) {
      const r = await request(s.port, path, { headers: { host: 'localhost' } });
      assert.equal(r.body.length, big.length, path);
      assert.equal(sha256(r.body), sha256(big), path);
    }
    const fixed = JSON.parse(
      (
        await request(s.port, '/up', {
          method: 'POST',
          headers: { host: 'localhost' },
          body: big,
        })
      ).text,
    ) as { length: number; sha256: string };
    assert.deepEqual([fixed.length, fixed.sha256], [big.length, sha256(big)]);
    const chunked = await new Promise<{ length: number; sha256: string }>((resolve, reject) => {
      const req = http.request(
        {
          port: s.port,
          host: '127.0.0.1',
          path: '/up',
          method: 'POST',
          headers: { host: 'localhost' },
        },
        (res) => {
          let text = '';
          res
            .setEncoding('utf8')
            .on('data', (d: string) => (text += d))
            .on('end', () => resolve(JSON.parse(text)));
        },
      );
      req.on('error', reject);
      for (let i = 0; i < big.length; i += 1 << 20) req.write(big.subarray(i, i + (1 << 20)));
      req.end();
    });
    assert.deepEqual([chunked.length, chunked.sha256], [big.length, sha256(big)]);
  });

  it('takes the rest of an upload a backend answered without reading: the connection stays usable', async (t) => {
    const b = await backend(t, (_req, res) => {
      res.writeHead(413, { 'Content-Length': '8' });
      res.end('too big\n');
    });
    const s = await proxy(t, proxyConfig(b.url));
    const received = await uploadThenAsk(
      s.port,
      'POST / HTTP/1.1\r\nHost: localhost\r\n',
      20 * 1024 * 1024,
      'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n',
      'too big',
    );
    assert.equal(received.split('HTTP/1.1 413').length - 1, 2, received);
  });

  it('relays Server-Sent Events one by one', async (t) => {
    let sendSecond: () => void = () => undefined;
    const b = await backend(t, (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write('data: one\n\n');
      sendSecond = () => res.end('data: two\n\n');
    });
    const s = await proxy(t, proxyConfig(b.url, '  enableCompression: true\n'));
    const res = await new Promise<IncomingMessage>((resolve) =>
      http.get(
        {
          port: s.port,
          host: '127.0.0.1',
          path: '/events',
          headers: { host: 'localhost', 'accept-encoding': 'gzip' },
        },
        resolve,
      ),
    );
    res.setEncoding('utf8');
    const [first] = (await once(res, 'data')) as [string];
    assert.equal(first, 'data: one\n\n', 'the first event arrives before the stream ends');
    sendSecond();
    const [second] = (await once(res, 'data')) as [string];
    assert.equal(second, 'data: two\n\n');
  });

  it('answers Expect: 100-continue and forwards the body', async (t) => {
    const b = await backend(t, echo);
    const s = await proxy(t, proxyConfig(b.url));
    const result = await new Promise<{ continued: boolean; length: number }>((resolve, reject) => {
      let continued = false;
      const req = http.request({
        port: s.port,
        host: '127.0.0.1',
        method: 'POST',
        path: '/',
        headers: { host: 'localhost', expect: '100-continue', 'content-length': 5 },
      });
      req.on('continue', () => {
        continued = true;
        req.end('hello');
      });
      req.on('response', (res) => {
        let text = '';
        res
          .setEncoding('utf8')
          .on('data', (d: string) => (text += d))
          .on('end', () =>
            resolve({ continued, length: (JSON.parse(text) as { length: number }).length }),
          );
      });
      req.on('error', reject);
    });
    assert.deepEqual(result, { continued: true, length: 5 });
  });

  it('proxies HTTP/2 clients to HTTP/1.1 backends', async (t) => {
    const b = await backend(t, echo);
    const sport = await freePort();
    await proxy(
      t,
      `global:\n  loadModules: [rproxy]\n  secure: true\n  sport: "127.0.0.1:${sport}"\n  cert: ${SERVER_CERT}\n  key: ${SERVER_KEY}\n  proxyTo: ${b.url}\n`,
    );
    const session = http2Connect(`https://localhost:${sport}`, {
      ca: TEST_CA,
    });
    const stream = session.request({ ':path': '/h2?x=1', cookie: ['a=1', 'b=2'], 'x-h2': 'yes' });
    stream.end();
    let text = '';
    stream.setEncoding('utf8').on('data', (d: string) => (text += d));
    const [headers] = (await once(stream, 'response')) as [Record<string, string>];
    await once(stream, 'end');
    session.close();
    assert.equal(headers[':status'], 200);
    const got = JSON.parse(text) as { url: string; headers: Record<string, string> };
    assert.equal(got.url, '/h2?x=1');
    assert.equal(got.headers['x-h2'], 'yes');
    assert.equal(got.headers.cookie, 'a=1; b=2', 'HTTP/2 cookie fields joined into one');
    assert.equal(got.headers['x-forwarded-proto'], 'https');
  });
});

describe('rproxy: the response a client receives', () => {
  it('relays status and repeated fields, adds customHeaders, drops hop-by-hop fields', async (t) => {
    const b = await backend(t, (_req, res) => {
      res.writeHead(
        201,
        [
          ['Set-Cookie', 'a=1'],
          ['Set-Cookie', 'b=2'],
          ['Connection', 'x-internal'],
          ['X-Internal', 'secret'],
          ['Keep-Alive', 'timeout=5'],
          ['X-Latin', 'caf\u00e9'],
          ['Content-Length', '2'],
        ].flat() as unknown as http.OutgoingHttpHeaders,
      );
      res.end('ok');
    });
    const s = await proxy(t, proxyConfig(b.url, '  customHeaders:\n    X-Site: portico\n'));
    const r = await request(s.port, '/', { headers: { host: 'localhost' } });
    assert.equal(r.status, 201);
    assert.deepEqual(r.headers['set-cookie'], ['a=1', 'b=2']);
    for (const name of ['x-internal', 'keep-alive']) assert.equal(r.headers[name], undefined, name);
    // Node writes the value in UTF-8 and reads header bytes as Latin-1: the same bytes came through.
    const latin = Buffer.from(String(r.headers['x-latin']), 'latin1').toString('utf8');
    assert.equal(latin, 'caf\u00e9', 'the value\u2019s bytes relayed as they came');
    assert.equal(r.headers['x-site'], 'portico');
    assert.equal(r.text, 'ok');
  });

  it('sends a backend error through the error responder with proxyInterceptErrors', async (t) => {
    const b = await backend(t, (_req, res) => {
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      res.end('backend page');
    });
    const s = await proxy(t, proxyConfig(b.url, '  proxyInterceptErrors: true\n'));
    const r = await request(s.port, '/missing', { headers: { host: 'localhost' } });
    assert.equal(r.status, 404);
    assert.doesNotMatch(r.text, /backend page/);
    assert.match(r.text, /404/);
  });
});

describe('rproxy: the access log', () => {
  it('names the authenticated user of a proxied request', async (t) => {
    const b = await backend(t, echo);
    const dir = mkdtempSync(join(tmpdir(), 'portico-rproxy-log-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const accessLog = join(dir, 'access.log');
    const pass = await hashPassword('right');
    const s = await proxy(
      t,
      proxyConfig(
        b.url,
        `  logFilePath: ${accessLog}\n  users: [{ name: alice, pass: "${pass}" }]\n  nonStandardCodes: [{ scode: 401, regex: "^/" }]\n`,
      ),
    );
    const authorization = `Basic ${Buffer.from('alice:right').toString('base64')}`;
    assert.equal(
      (await request(s.port, '/private', { headers: { host: 'localhost', authorization } })).status,
      200,
    );
    await s.close();
    assert.match(
      readFileSync(accessLog, 'utf8'),
      /^127\.0\.0\.1 - alice \[[^\]]+\] "GET \/private HTTP\/1\.1" 200 /m,
    );
  });
});

describe('rproxy: failures', () => {
  it('answers 503 for a refused or unresolvable backend and 502 for one that closes before its head', async (t) => {
    const dead = await freePort();
    const rude = await backend(t, (req) => req.socket.destroy());
    const s = await proxy(
      t,
      `global:\n  loadModules: [rproxy]\nhosts:\n  - domain: localhost\n    locations:\n      - path: /dead\n        proxyTo: http://127.0.0.1:${dead}\n      - path: /nowhere\n        proxyTo: http://nonexistent.invalid\n      - path: /rude\n        proxyTo: ${rude.url}\n`,
    );
    assert.equal((await request(s.port, '/dead', { headers: { host: 'localhost' } })).status, 503);
    assert.equal(
      (await request(s.port, '/nowhere', { headers: { host: 'localhost' } })).status,
      503,
    );
    assert.equal((await request(s.port, '/rude', { headers: { host: 'localhost' } })).status, 502);
    const log = s.stderr();
    assert.match(log, new RegExp(`\\[upstream-refused\\] proxy to http://127\\.0\\.0\\.1:${dead}`));
    assert.match(log, /\[upstream-unreachable\] proxy to http:\/\/nonexistent\.invalid/);
    assert.match(log, /\[upstream-failed\] proxy to http:\/\/127\.0\.0\.1:\d+/);
  });

  it('retries a refused connection on another backend; health checks then avoid the dead one', async (t) => {
    const dead = await freePort();
    const b = await backend(t, echo);
    const s = await proxy(
      t,
      proxyConfig(
        [`http://127.0.0.1:${dead}`, b.url],
        '  enableLoadBalancerHealthCheck: true\n  loadBalancerHealthCheckMaximumFails: 1\n  loadBalancerHealthCheckWindow: 60000\n',
      ),
    );
    for (let i = 0; i < 20; i++)
      assert.equal(
        (await request(s.port, `/r${i}`, { headers: { host: 'localhost' } })).status,
        200,
      );
    const retries = s.stderr().match(/trying another backend/g)?.length ?? 0;
    assert.ok(
      retries >= 1 && retries <= 2,
      `the dead backend is tried until it is marked bad (${retries})`,
    );
    const status = s.server.status() as {
      modules: { rproxy: { backends: { url: string; healthy: boolean }[] }[] };
    };
    const health = Object.fromEntries(
      status.modules.rproxy[0]!.backends.map((x) => [x.url, x.healthy]),
    );
    assert.deepEqual(health, { [`http://127.0.0.1:${dead}`]: false, [b.url]: true });
  });

  it('answers 504 when the backend accepts no connection within the connect timeout (10 s)', async (t) => {
    const hole = await blackhole();
    if (hole === undefined) return t.skip('python3 is needed for a listener that never accepts');
    t.after(() => hole.child.kill());
    const port = hole.port;
    const s = await proxy(t, proxyConfig(`http://127.0.0.1:${port}`, '  timeout: 30000\n'));
    const started = Date.now();
    const res = await request(s.port, '/', { headers: { host: 'localhost' } });
    const waited = Date.now() - started;
    assert.equal(res.status, 504);
    assert.ok(waited >= 9_000 && waited < 20_000, `waited ${waited} ms`);
    assert.match(s.stderr(), /\[upstream-timeout\] proxy to http:\/\/127\.0\.0\.1:\d+/);
  });

  it('cuts the client’s response when the backend dies mid-body', async (t) => {
    const b = await backend(t, (req, res) => {
      const fixed = req.url === '/fixed';
      res.writeHead(200, fixed ? { 'Content-Length': 1_000_000 } : {});
      res.write(Buffer.alloc(1000, 97));
      setTimeout(() => res.socket?.destroy(), 50);
    });
    const s = await proxy(t, proxyConfig(b.url));
    for (const path of ['/fixed', '/chunked']) {
      const outcome = await new Promise<string>((resolve) => {
        http
          .get({ port: s.port, host: '127.0.0.1', path, headers: { host: 'localhost' } }, (res) => {
            res.on('data', () => undefined);
            res.on('end', () => resolve(res.complete ? 'complete' : 'incomplete'));
            res.on('error', () => resolve('error'));
            res.on('aborted', () => resolve('aborted'));
          })
          .on('error', () => resolve('error'));
      });
      assert.notEqual(outcome, 'complete', path);
    }
  });
});

describe('rproxy: TLS to backends', () => {
  it('refuses a backend certificate Node does not trust (502), unless verification is off', async (t) => {
    const b = await backend(t, echo, true);
    const s = await proxy(
      t,
      `global:\n  loadModules: [rproxy]\nhosts:\n  - domain: localhost\n    locations:\n      - path: /checked\n        proxyTo: ${b.url}\n      - path: /unchecked\n        proxyTo: ${b.url}\n        disableProxyCertificateVerification: true\n`,
    );
    assert.equal(
      (await request(s.port, '/checked', { headers: { host: 'localhost' } })).status,
      502,
    );
    assert.equal(
      (await request(s.port, '/unchecked', { headers: { host: 'localhost' } })).status,
      200,
    );
  });

  it('trusts a CA given in NODE_EXTRA_CA_CERTS, with SNI set to the backend’s name', async (t) => {
    const b = await backend(t, echo, true);
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'portico-rproxy-'));
    writeFileSync(
      join(dir, 'p.yaml'),
      `global:\n  port: "127.0.0.1:${port}"\n  loadModules: [rproxy]\n  proxyTo: ${b.url}\n`,
    );
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const { child, exited } = await runServing(join(dir, 'p.yaml'), {
      env: { ...process.env, NODE_EXTRA_CA_CERTS: TEST_CA_FILE },
    });
    t.after(async () => {
      child.kill('SIGTERM');
      await exited;
    });
    assert.equal((await request(port, '/')).status, 200);
  });
});
