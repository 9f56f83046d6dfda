// Fields that crossed the proxy badly: a backend's head an HTTP/2 client cannot be sent (a
// repeated single-value field, a status past 599) must not take the server down; a client's
// trailers must not carry X-Forwarded-For or Host to a backend; a repeated request field must not
// fail an HTTP/2 backend's request; `{path}` in a header rule is the path, `$'` and all.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import http2, { type IncomingHttpHeaders } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { request } from '../helpers/http.js';
import { freePort, startServer, type RunningServer } from '../helpers/server.js';
import { SERVER_CERT, SERVER_KEY, TEST_CA } from '../helpers/tls.js';

async function listen(t: TestContext, server: http.Server | http2.Http2Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => {
    if ('closeAllConnections' in server) server.closeAllConnections();
    server.close();
  });
  return (server.address() as AddressInfo).port;
}

async function tlsProxy(t: TestContext, backend: string): Promise<RunningServer> {
  const sport = await freePort();
  const s = await startServer(
    `global:\n  loadModules: [rproxy]\n  proxyTo: ${backend}\n  secure: true\n  disableToHTTPSRedirect: true\n` +
      `  sport: "127.0.0.1:${sport}"\n  cert: ${SERVER_CERT}\n  key: ${SERVER_KEY}\n`,
  );
  t.after(() => s.close());
  return Object.assign(s, { sport });
}

/** A GET over HTTP/2 (TLS): its status and head. */
async function h2Get(sport: number, path: string): Promise<IncomingHttpHeaders> {
  const session = http2.connect(`https://localhost:${sport}`, {
    ca: TEST_CA,
    host: '127.0.0.1',
  } as never);
  session.on('error', () => undefined);
  try {
    const stream = session.request({ ':path': path });
    stream.resume();
    const [head] = (await once(stream, 'response')) as [IncomingHttpHeaders];
    await once(stream, 'close');
    return head;
  } finally {
    session.close();
  }
}

describe('fields across the proxy', () => {
  it('a backend head an HTTP/2 client cannot carry is a 502, and the server stays up', async (t) => {
    const backend = http.createServer((req, res) => {
      // The body in a later packet: the head is relayed on a turn of its own.
      res.writeHead(req.url === '/600' ? 600 : 200, [
        ['Content-Type', 'text/plain'],
        ['Content-Type', 'text/html'],
        ['X-Content-Type-Options', 'nosniff'],
        ['X-Content-Type-Options', 'nosniff'],
      ]);
      res.flushHeaders();
      setImmediate(() => res.end('body'));
    });
    const port = await listen(t, backend);
    const s = (await tlsProxy(t, `http://127.0.0.1:${port}`)) as RunningServer & { sport: number };
    const twice = await h2Get(s.sport, '/twice');
    assert.equal(twice[':status'], 200);
    assert.equal(twice['content-type'], 'text/plain');
    assert.equal((await h2Get(s.sport, '/600'))[':status'], 502);
    assert.equal((await request(s.port, '/after')).status, 200, 'still serving');
  });

  it('a client’s trailers never carry X-Forwarded-For, Host or Authorization to an HTTP/2 backend', async (t) => {
    let received: IncomingHttpHeaders = {};
    const backend = http2.createServer();
    backend.on('stream', (stream) => {
      stream.on('trailers', (trailers: IncomingHttpHeaders) => (received = trailers));
      stream.resume();
      stream.on('end', () => {
        stream.respond({ ':status': 200 });
        stream.end('ok');
      });
    });
    const port = await listen(t, backend);
    const s = await startServer(
      `global:\n  loadModules: [rproxy]\n  proxyTo: h2c://127.0.0.1:${port}\n`,
    );
    t.after(() => s.close());
    const socket = connect(s.port, '127.0.0.1');
    socket.write(
      'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTE: trailers\r\nConnection: close\r\n\r\n' +
        '2\r\nhi\r\n0\r\nX-Forwarded-For: 6.6.6.6\r\nHost: evil.test\r\nAuthorization: Basic eA==\r\nX-Checksum: 42\r\n\r\n',
    );
    let answer = '';
    socket.setEncoding('latin1').on('data', (d: string) => (answer += d));
    await once(socket, 'close');
    assert.match(answer, /^HTTP\/1\.1 200 /);
    assert.equal(received['x-checksum'], '42');
    for (const name of ['x-forwarded-for', 'host', 'authorization'])
      assert.equal(received[name], undefined, name);
  });

  it('repeated request fields (TE, User-Agent) reach an HTTP/2 backend as one', async (t) => {
    let seen: IncomingHttpHeaders = {};
    const backend = http2.createServer((req, res) => {
      seen = req.headers;
      res.end('ok');
    });
    const port = await listen(t, backend);
    const s = await startServer(
      `global:\n  loadModules: [rproxy]\n  proxyTo: h2c://127.0.0.1:${port}\n`,
    );
    t.after(() => s.close());
    const socket = connect(s.port, '127.0.0.1');
    socket.write(
      'GET / HTTP/1.1\r\nHost: x\r\nTE: trailers\r\nTE: trailers\r\nUser-Agent: a\r\nUser-Agent: b\r\nConnection: close\r\n\r\n',
    );
    let answer = '';
    socket.setEncoding('latin1').on('data', (d: string) => (answer += d));
    await once(socket, 'close');
    assert.match(answer, /^HTTP\/1\.1 200 /);
    assert.equal(seen['user-agent'], 'a');
    assert.equal(seen.te, 'trailers');
  });

  it('{path} in a header rule is the path as it is, $ sequences included', async (t) => {
    const s = await startServer(
      `global:\n  respond:\n    body: ok\n  setHeaders:\n    Link: "<{path}>; rel=canonical"\n`,
    );
    t.after(() => s.close());
    const r = await request(s.port, "/a$'b$&");
    assert.equal(r.headers.link, "</a$'b$&>; rel=canonical");
  });
});
