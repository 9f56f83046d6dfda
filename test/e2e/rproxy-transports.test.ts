// The ways rproxy reaches a backend besides HTTP/1.1 over TCP: Unix sockets in every form proxyTo
// accepts (and one that is missing), HTTP/2 with prior knowledge (h2c) and by ALPN over TLS; and
// trailer fields both ways over each, with real node:http and node:http2 peers.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import http2, { type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import WebSocket, { WebSocketServer } from 'ws';
import { request } from '../helpers/http.js';
import { freePort, startServer, type RunningServer } from '../helpers/server.js';
import { SERVER_CERT, SERVER_KEY, TEST_CA } from '../helpers/tls.js';
import { logged } from '../helpers/wait.js';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function proxy(t: TestContext, settings: string): Promise<RunningServer> {
  const s = await startServer(`global:\n  loadModules: [rproxy]\n${settings}`);
  t.after(() => s.close());
  return s;
}

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'portico-transports-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A node:http server on a Unix socket (or 127.0.0.1), answering what it saw. */
async function httpBackend(
  t: TestContext,
  where: string | undefined,
  handler: (req: IncomingMessage, res: ServerResponse) => void = seenAs,
): Promise<number> {
  const server = http.createServer(handler);
  if (where === undefined) server.listen(0, '127.0.0.1');
  else server.listen(where);
  await once(server, 'listening');
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return where === undefined ? (server.address() as AddressInfo).port : 0;
}

function seenAs(req: IncomingMessage, res: ServerResponse): void {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ url: req.url, host: req.headers.host, version: req.httpVersion }));
}

/** A node:http2 h2c backend on 127.0.0.1. */
async function http2Backend(
  t: TestContext,
  onStream: (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => void,
): Promise<number> {
  const server = http2.createServer();
  server.on('stream', onStream);
  return listen(t, server);
}

/** Listens on 127.0.0.1 until the test ends (its HTTP/2 sessions destroyed then): the port. */
async function listen(
  t: TestContext,
  server: http2.Http2Server | http2.Http2SecureServer,
): Promise<number> {
  const sessions = new Set<http2.Http2Session>();
  server.on('session', (s: http2.Http2Session) => {
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => {
    for (const s of sessions) s.destroy();
    server.close();
  });
  return (server.address() as AddressInfo).port;
}

/** A GET over HTTP/1.1 with `te`, read whole: the body and the trailers Node parsed. */
function getWithTrailers(
  port: number,
  path: string,
  te: string | undefined,
): Promise<{ status: number; body: string; trailers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      { host: '127.0.0.1', port, path, agent: false, headers: te ? { te } : {} },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode!, body, trailers: res.trailers }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
  });
}

describe('rproxy: Unix-socket backends', () => {
  it('reaches a backend on a socket in each written form, with Host: localhost', async (t) => {
    const path = join(tempDir(t), 'app.sock');
    await httpBackend(t, path);
    const forms = [
      `unix:${path}`,
      `unix://${path}`,
      `http://unix:${path}:/base`,
      `http+unix://${encodeURIComponent(path)}/base/`,
    ];
    const s = await proxy(
      t,
      `hosts:\n  - domain: localhost\n    locations:\n${forms
        .map((form, i) => `      - path: /f${i}\n        proxyTo: "${form}"\n`)
        .join('')}`,
    );
    const seen = [];
    for (let i = 0; i < forms.length; i++) {
      const r = await request(s.port, `/f${i}/x?y=1`, { headers: { host: 'localhost' } });
      assert.equal(r.status, 200, forms[i]);
      seen.push(JSON.parse(r.text) as { url: string; host: string });
    }
    assert.deepEqual(seen, [
      { url: '/f0/x?y=1', host: 'localhost', version: '1.1' },
      { url: '/f1/x?y=1', host: 'localhost', version: '1.1' },
      { url: '/base/f2/x?y=1', host: 'localhost', version: '1.1' },
      { url: '/base/f3/x?y=1', host: 'localhost', version: '1.1' },
    ]);
  });

  it('a missing socket: 502 and an error-log line, then served once the socket appears', async (t) => {
    const path = join(tempDir(t), 'later.sock');
    const s = await proxy(t, `  proxyTo: unix:${path}\n`);
    const r = await request(s.port, '/');
    assert.equal(r.status, 502);
    await logged(
      s.stderr,
      new RegExp(`\\[upstream-failed\\] proxy to unix:${path}: connect ENOENT ${path}`),
    );
    await httpBackend(t, path);
    const again = await request(s.port, '/now');
    assert.equal(again.status, 200);
    assert.equal((JSON.parse(again.text) as { url: string }).url, '/now');
  });
});

describe('rproxy: trailer fields', () => {
  /** An HTTP/1.1 backend whose chunked body ends with a checksum trailer it announces. */
  const withTrailer = (req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/plain', trailer: 'x-checksum' });
    res.write('part one, ');
    res.addTrailers({ 'x-checksum': 'abc123', 'x-te-seen': req.headers.te ?? 'none' });
    res.end('part two');
  };

  it('an HTTP/1.1 backend’s trailers reach an HTTP/1.1 client that sent TE: trailers, only it', async (t) => {
    const port = await httpBackend(t, undefined, withTrailer);
    const s = await proxy(t, `  proxyTo: http://127.0.0.1:${port}\n`);
    const asked = await getWithTrailers(s.port, '/', 'trailers');
    assert.equal(asked.body, 'part one, part two');
    assert.equal(asked.trailers['x-checksum'], 'abc123');
    assert.equal(asked.trailers['x-te-seen'], 'trailers', 'TE: trailers reached the backend');
    const plain = await getWithTrailers(s.port, '/', undefined);
    assert.equal(plain.body, 'part one, part two');
    assert.deepEqual(plain.trailers, {});
  });

  it('an HTTP/1.1 backend’s announced trailers reach an HTTP/2 client', async (t) => {
    const port = await httpBackend(t, undefined, withTrailer);
    const sport = await freePort();
    await proxy(
      t,
      `  secure: true\n  sport: "127.0.0.1:${sport}"\n  cert: ${SERVER_CERT}\n  key: ${SERVER_KEY}\n  proxyTo: http://127.0.0.1:${port}\n`,
    );
    const session = http2.connect(`https://localhost:${sport}`, { ca: TEST_CA });
    t.after(() => session.close());
    const stream = session.request({ ':path': '/', te: 'trailers' });
    let body = '';
    let trailers: IncomingHttpHeaders | undefined;
    stream.setEncoding('utf8').on('data', (d: string) => (body += d));
    stream.on('trailers', (fields: IncomingHttpHeaders) => (trailers = fields));
    await once(stream, 'end');
    assert.equal(body, 'part one, part two');
    assert.equal(trailers?.['x-checksum'], 'abc123');
  });

  it('an h2c backend’s trailers reach an HTTP/1.1 client with TE: trailers; a client’s reach it', async (t) => {
    let requestTrailers: IncomingHttpHeaders | undefined;
    let requestBody = '';
    let te: string | string[] | undefined;
    const port = await http2Backend(t, (stream, headers) => {
      te = headers.te;
      stream.setEncoding('utf8').on('data', (d: string) => (requestBody += d));
      stream.on('trailers', (trailers: IncomingHttpHeaders) => (requestTrailers = trailers));
      stream.on('end', () => {
        stream.respond({ ':status': 200 }, { waitForTrailers: true });
        stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0', 'x-n': '1' }));
        stream.end('answer');
      });
    });
    const s = await proxy(t, `  proxyTo: h2c://127.0.0.1:${port}\n`);
    const reply = await new Promise<{ body: string; trailers: http.IncomingHttpHeaders }>(
      (resolve, reject) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port: s.port,
            method: 'POST',
            path: '/up',
            agent: false,
            headers: { te: 'trailers', 'transfer-encoding': 'chunked' },
          },
          (res) => {
            let body = '';
            res.setEncoding('utf8').on('data', (d: string) => (body += d));
            res.on('end', () => resolve({ body, trailers: res.trailers }));
          },
        );
        req.on('error', reject);
        req.write('client ');
        req.addTrailers({ 'x-client-sum': 'c0ffee' });
        req.end('body');
      },
    );
    assert.equal(requestBody, 'client body');
    assert.equal(requestTrailers?.['x-client-sum'], 'c0ffee');
    assert.equal(te, 'trailers');
    assert.equal(reply.body, 'answer');
    assert.deepEqual(reply.trailers, { 'grpc-status': '0', 'x-n': '1' });
  });
  it('an HTTP/2 client’s request trailers reach an h2c backend, its response trailers the client', async (t) => {
    let requestTrailers: IncomingHttpHeaders | undefined;
    const port = await http2Backend(t, (stream) => {
      stream.on('trailers', (trailers: IncomingHttpHeaders) => (requestTrailers = trailers));
      stream.resume();
      stream.on('end', () => {
        stream.respond({ ':status': 200 }, { waitForTrailers: true });
        stream.on('wantTrailers', () => stream.sendTrailers({ 'x-answer-sum': '42' }));
        stream.end('ok');
      });
    });
    const sport = await freePort();
    await proxy(
      t,
      `  secure: true\n  sport: "127.0.0.1:${sport}"\n  cert: ${SERVER_CERT}\n  key: ${SERVER_KEY}\n  proxyTo: h2c://127.0.0.1:${port}\n`,
    );
    const session = http2.connect(`https://localhost:${sport}`, { ca: TEST_CA });
    t.after(() => session.close());
    const stream = session.request({ ':path': '/', ':method': 'POST' }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers({ 'x-upload-sum': 'beef' }));
    let trailers: IncomingHttpHeaders | undefined;
    stream.on('trailers', (fields: IncomingHttpHeaders) => (trailers = fields));
    stream.end('upload');
    stream.resume();
    await once(stream, 'end');
    assert.equal(requestTrailers?.['x-upload-sum'], 'beef');
    assert.equal(trailers?.['x-answer-sum'], '42');
  });
});

describe('rproxy: HTTP/2 backends', () => {
  it('h2c: 4 MiB up and down intact, with backpressure both ways', async (t) => {
    const port = await http2Backend(t, (stream) => {
      const hash = createHash('sha256');
      let length = 0;
      stream.on('data', (d: Buffer) => {
        hash.update(d);
        length += d.length;
      });
      stream.on('end', () => {
        stream.respond({ ':status': 200, 'x-up': `${length} ${hash.digest('hex')}` });
        stream.end(big);
      });
    });
    const big = randomBytes(4 * 1024 * 1024);
    const s = await proxy(t, `  proxyTo: h2c://127.0.0.1:${port}\n`);
    const r = await request(s.port, '/', { method: 'PUT', body: big });
    assert.equal(r.status, 200);
    assert.equal(r.headers['x-up'], `${big.length} ${sha256(big)}`);
    assert.equal(sha256(r.body), sha256(big));
  });

  it('h2c: a request a backend refuses to connect goes to another, as over HTTP/1.1', async (t) => {
    const port = await http2Backend(t, (stream) =>
      stream.respond({ ':status': 200 }, { endStream: true }),
    );
    const refused = await freePort();
    const s = await proxy(
      t,
      `  enableLoadBalancerHealthCheck: true\n  proxyTo: [h2c://127.0.0.1:${refused}, h2c://127.0.0.1:${port}]\n`,
    );
    for (let i = 0; i < 10; i++) assert.equal((await request(s.port, '/')).status, 200);
    await logged(
      s.stderr,
      new RegExp(
        `\\[upstream-refused\\] proxy to h2c://127.0.0.1:${refused}: .*trying another backend`,
      ),
    );
  });

  it('proxyHTTP2: HTTPS backends that offer h2 get it, HTTP/1.1-only ones HTTP/1.1', async (t) => {
    // Says which protocol each request came in: HTTP/2, or HTTP/1.1 where allowed.
    const versions = (allowHTTP1: boolean) => {
      const server = http2.createSecureServer({
        cert: readFileSync(SERVER_CERT),
        key: readFileSync(SERVER_KEY),
        allowHTTP1,
      });
      server.on('request', (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) =>
        res.writeHead(200, { 'x-version': req.httpVersion }).end(),
      );
      return listen(t, server);
    };
    const both = await versions(true);
    const https = (await import('node:https')).createServer(
      { cert: readFileSync(SERVER_CERT), key: readFileSync(SERVER_KEY) },
      (req, res) => res.writeHead(200, { 'x-version': req.httpVersion }).end(),
    );
    https.listen(0, '127.0.0.1');
    await once(https, 'listening');
    t.after(() => {
      https.closeAllConnections();
      https.close();
    });
    const only1 = (https.address() as AddressInfo).port;
    const unchecked = '        disableProxyCertificateVerification: true\n';
    const s = await proxy(
      t,
      `hosts:\n  - domain: localhost\n    locations:\n` +
        `      - path: /h2\n        proxyTo: https://localhost:${both}\n        proxyHTTP2: true\n${unchecked}` +
        `      - path: /h1\n        proxyTo: https://localhost:${only1}\n        proxyHTTP2: true\n${unchecked}` +
        `      - path: /off\n        proxyTo: https://localhost:${both}\n${unchecked}` +
        `      - path: /checked\n        proxyTo: https://localhost:${both}\n        proxyHTTP2: true\n`,
    );
    const version = async (path: string) => {
      const r = await request(s.port, path, { headers: { host: 'localhost' } });
      return `${r.status} ${r.headers['x-version']}`;
    };
    assert.equal(await version('/h2'), '200 2.0');
    assert.equal(await version('/h1'), '200 1.1');
    assert.equal(await version('/h1'), '200 1.1', 'again, now known to be HTTP/1.1');
    assert.equal(await version('/off'), '200 1.1', 'without proxyHTTP2, HTTP/1.1');
    // The test CA is not Node's: verification applies to HTTP/2 connections too.
    assert.equal(await version('/checked'), '502 undefined');
  });

  it('proxyHTTP2: a WebSocket goes to an HTTPS backend over HTTP/1.1', async (t) => {
    const https = (await import('node:https')).createServer({
      cert: readFileSync(SERVER_CERT),
      key: readFileSync(SERVER_KEY),
    });
    const wss = new WebSocketServer({ server: https });
    wss.on('connection', (socket) => socket.on('message', (data) => socket.send(`echo ${data}`)));
    https.listen(0, '127.0.0.1');
    await once(https, 'listening');
    t.after(() => {
      for (const client of wss.clients) client.terminate();
      wss.close();
      https.closeAllConnections();
      https.close();
    });
    const s = await proxy(
      t,
      `  proxyTo: https://localhost:${(https.address() as AddressInfo).port}\n  proxyHTTP2: true\n  disableProxyCertificateVerification: true\n`,
    );
    const ws = new WebSocket(`ws://127.0.0.1:${s.port}/chat`);
    t.after(() => ws.terminate());
    await once(ws, 'open');
    ws.send('hello');
    const [answer] = (await once(ws, 'message')) as [Buffer];
    assert.equal(answer.toString(), 'echo hello');
  });

  it('a WebSocket to an h2c backend: 502 and a log line, not a hang', async (t) => {
    const port = await http2Backend(t, (stream) => stream.respond({ ':status': 200 }));
    const s = await proxy(t, `  proxyTo: h2c://127.0.0.1:${port}\n`);
    const ws = new WebSocket(`ws://127.0.0.1:${s.port}/chat`);
    ws.on('error', () => undefined);
    const [, response] = (await once(ws, 'unexpected-response')) as [unknown, IncomingMessage];
    assert.equal(response.statusCode, 502);
    await logged(s.stderr, /a WebSocket cannot be proxied to an HTTP\/2 backend/);
  });
});
