// Forwarded authentication as the Authelia / Authentik / oauth2-proxy pattern uses it: a real
// authentication server that sends a 302 to its login page until a session cookie is there, then
// names the user in Remote-User; a real application behind rproxy (REFERENCE §17, CONTRACT 11).
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http, {
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { request } from '../helpers/http.js';
import { freePort, startServer, type RunningServer } from '../helpers/server.js';

interface Peer {
  readonly url: string;
  readonly seen: { method: string; url: string; headers: IncomingHttpHeaders; body: string }[];
}

async function peer(
  t: TestContext,
  answer: (req: IncomingMessage, res: ServerResponse, body: string) => void,
): Promise<Peer> {
  const seen: Peer['seen'] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (d: string) => (body += d));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      answer(req, res, body);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

/** The authentication server: a session cookie lets in, a bad bearer token is a 401, else the login page. */
function authServer(t: TestContext): Promise<Peer> {
  return peer(t, (req, res) => {
    const cookie = req.headers.cookie ?? '';
    if (cookie.includes('session=alice')) {
      res.writeHead(200, {
        'Remote-User': 'alice',
        'Remote-Groups': 'admins',
        'Set-Cookie': 'refreshed=1',
      });
      return void res.end('ok');
    }
    if (cookie.includes('session=anonymous')) return void res.writeHead(200).end();
    if (req.headers.authorization === 'Bearer bad') {
      res.writeHead(401, {
        'WWW-Authenticate': 'Bearer realm="apps"',
        'Content-Type': 'text/plain',
      });
      return void res.end('nope');
    }
    const rd = `${req.headers['x-forwarded-proto']}://${req.headers['x-forwarded-host']}${req.headers['x-forwarded-uri']}`;
    res.writeHead(302, {
      Location: `https://login.example/?rd=${encodeURIComponent(rd)}`,
      'Content-Type': 'text/plain',
    });
    res.end('login first');
  });
}

const app = (t: TestContext) =>
  peer(t, (req, res, body) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body }));
  });

async function portico(t: TestContext, auth: string, upstream: string): Promise<RunningServer> {
  const s = await startServer(
    `global:\n  loadModules: [fauth, rproxy]\nhosts:\n  - domain: localhost\n    authTo: ${auth}/verify?from=portico\n    forwardedAuthCopyHeaders: [Remote-User, Remote-Groups]\n    proxyTo: ${upstream}\n`,
  );
  t.after(() => s.close());
  return s;
}

describe('fauth', () => {
  it('relays the login redirect, asking the authentication server about the original request', async (t) => {
    const auth = await authServer(t);
    const upstream = await app(t);
    const s = await portico(t, auth.url, upstream.url);
    const r = await request(s.port, '/private/page?x=1', {
      headers: { host: 'localhost', 'x-forwarded-uri': '/spoofed' },
    });
    assert.equal(r.status, 302);
    assert.equal(
      r.headers.location,
      `https://login.example/?rd=${encodeURIComponent('http://localhost/private/page?x=1')}`,
    );
    assert.equal(r.text, 'login first');
    assert.equal(r.headers.server, 'Portico');
    assert.equal(upstream.seen.length, 0, 'the application never saw it');
    const asked = auth.seen[0]!;
    assert.equal(asked.method, 'GET');
    assert.equal(asked.url, '/verify?from=portico');
    assert.equal(asked.headers['x-forwarded-method'], 'GET');
    assert.equal(asked.headers['x-forwarded-for'], '127.0.0.1');
  });

  it('lets a session through with the server’s Remote-User, never the client’s', async (t) => {
    const auth = await authServer(t);
    const upstream = await app(t);
    const s = await portico(t, auth.url, upstream.url);
    const r = await request(s.port, '/dashboard', {
      headers: {
        host: 'localhost',
        cookie: 'session=alice',
        'remote-user': 'admin',
        'remote-groups': 'root',
      },
    });
    assert.equal(r.status, 200);
    const got = JSON.parse(r.text) as { headers: Record<string, string> };
    assert.equal(got.headers['remote-user'], 'alice');
    assert.equal(got.headers['remote-groups'], 'admins');
    assert.equal(got.headers.cookie, 'session=alice', 'the application sees the cookie too');
    assert.equal(
      r.headers['set-cookie'],
      undefined,
      'the allowed answer’s own headers do not reach the client',
    );

    const anonymous = await request(s.port, '/dashboard', {
      headers: { host: 'localhost', cookie: 'session=anonymous', 'remote-user': 'admin' },
    });
    assert.equal(
      (JSON.parse(anonymous.text) as { headers: Record<string, string> }).headers['remote-user'],
      undefined,
      'a listed header the server did not send is dropped',
    );
  });

  it('sends no body or length to the authentication server, and the whole body to the application', async (t) => {
    const auth = await authServer(t);
    const upstream = await app(t);
    const s = await portico(t, auth.url, upstream.url);
    const body = 'x'.repeat(100_000);
    const r = await request(s.port, '/form', {
      method: 'POST',
      headers: { host: 'localhost', cookie: 'session=alice' },
      body,
    });
    assert.equal(r.status, 200);
    const asked = auth.seen[0]!;
    assert.equal(asked.method, 'GET');
    assert.equal(asked.headers['x-forwarded-method'], 'POST');
    assert.equal(asked.headers['content-length'], undefined);
    assert.equal(asked.headers['transfer-encoding'], undefined);
    assert.equal(asked.body, '');
    assert.equal((JSON.parse(r.text) as { body: string }).body.length, body.length);
  });

  it('relays a 401 with its challenge, and answers 503 when the server is down', async (t) => {
    const auth = await authServer(t);
    const upstream = await app(t);
    const s = await portico(t, auth.url, upstream.url);
    const r = await request(s.port, '/api', {
      headers: { host: 'localhost', authorization: 'Bearer bad' },
    });
    assert.equal(r.status, 401);
    assert.equal(r.headers['www-authenticate'], 'Bearer realm="apps"');
    assert.equal(r.text, 'nope');

    const down = await portico(t, `http://127.0.0.1:${await freePort()}`, upstream.url);
    assert.equal(
      (await request(down.port, '/api', { headers: { host: 'localhost' } })).status,
      503,
    );
    assert.match(down.stderr(), /\[upstream-refused\] authentication at http:\/\/127\.0\.0\.1:\d+/);
    assert.equal(upstream.seen.length, 0);
  });
});
