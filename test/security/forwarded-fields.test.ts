// A client cannot tell a backend it is someone else: the fields backends read a client's address,
// scheme or path prefix from (`Forwarded`, `X-Real-IP`, the whole `X-Forwarded-*` family) never
// reach a backend or an authentication server as the client wrote them. Portico sets
// X-Forwarded-For, -Proto and -Host itself (REFERENCE §14, §17); with trusted proxies the
// address it resolves through X-Forwarded-For is the one the backend gets.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import { connect as http2Connect } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { raw } from '../helpers/http.js';
import { freePort } from '../helpers/server.js';
import { spawnPortico, type PorticoProcess } from './portico-process.js';
import { SERVER_CERT, SERVER_KEY, TEST_CA } from '../helpers/tls.js';

// What a client forges, in the spellings and repetitions it may use.
const FORGED: [string, string][] = [
  ['Forwarded', 'for=6.6.6.6;proto=https;host=evil.example'],
  ['forwarded', 'for="[2001:db8::66]"'],
  ['X-Real-IP', '6.6.6.6'],
  ['x-real-ip', '6.6.6.7'],
  ['X-Forwarded-For', '6.6.6.6'],
  ['X-Forwarded-Proto', 'https-forged'],
  ['X-Forwarded-Host', 'evil.example'],
  ['X-Forwarded-Port', '6666'],
  ['X-Forwarded-Server', 'evil.example'],
  ['X-Forwarded-Prefix', '/forged-prefix'],
  ['X-Forwarded-Ssl', 'on-forged'],
  ['X-FORWARDED-SCHEME', 'https-forged'],
  ['X-Forwarded-Uri', '/forged-uri'],
  ['X-Forwarded-Method', 'FORGED'],
  ['X-Forwarded-User', 'forged-admin'],
];
const FORGED_VALUES = ['6.6.6', '2001:db8::66', 'evil.example', '6666', 'forged'];
// The fields no backend may get from the client; Portico's own X-Forwarded-* are checked by value.
const PORTICO_SETS = new Set(['x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host']);

interface Seen {
  readonly url: string;
  readonly rawHeaders: string[];
  readonly headers: IncomingMessage['headers'];
}

/** A node:http server that records each request's head and answers 200. */
async function recorder(): Promise<{ url: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', rawHeaders: req.rawHeaders, headers: req.headers });
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-length': '2' }).end('ok'));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let backend: Awaited<ReturnType<typeof recorder>>;
let auth: Awaited<ReturnType<typeof recorder>>;
let portico: PorticoProcess;
let sport: number;

before(async () => {
  backend = await recorder();
  auth = await recorder();
  sport = await freePort();
  portico = await spawnPortico(`global:
  loadModules: [fauth, rproxy]
  secure: true
  disableToHTTPSRedirect: true
  sport: "127.0.0.1:${sport}"
  cert: ${SERVER_CERT}
  key: ${SERVER_KEY}
  proxyTo: ${backend.url}
hosts:
  - domain: auth.test
    authTo: ${auth.url}/check
  - domain: off.test
    disableProxyXForwarded: true
  - domain: trusted.test
    enableIPSpoofing: true
    trustedProxies: [127.0.0.1]
  - domain: open.test
`);
});
after(async () => {
  await portico?.stop();
  await backend?.close();
  await auth?.close();
});

/** An HTTP/1.1 request with every forged field, written as bytes; resolves with the status. */
async function forge(host: string, extra: [string, string][] = []): Promise<string | undefined> {
  const fields = [...FORGED, ...extra].map(([n, v]) => `${n}: ${v}\r\n`).join('');
  const reply = await raw(
    portico.port,
    `GET /path HTTP/1.1\r\nHost: ${host}\r\n${fields}Connection: close\r\n\r\n`,
  );
  return /^HTTP\/1\.1 (\d{3}) /.exec(reply)?.[1];
}

/**
 * The last request `peer` received, asserted free of every forged field and value; `own` are the
 * X-Forwarded-* fields Portico itself sends it.
 */
function lastClean(peer: { seen: Seen[] }, what: string, own = PORTICO_SETS): Seen {
  const got = peer.seen.at(-1);
  assert.ok(got, `${what} received nothing`);
  for (let i = 0; i < got.rawHeaders.length; i += 2) {
    const name = got.rawHeaders[i]!.toLowerCase();
    const value = got.rawHeaders[i + 1]!;
    assert.ok(
      name !== 'forwarded' && name !== 'x-real-ip',
      `${what} got ${name}: ${value} from the client`,
    );
    assert.ok(
      !name.startsWith('x-forwarded-') || own.has(name),
      `${what} got ${name}: ${value} from the client`,
    );
    for (const forged of FORGED_VALUES)
      assert.ok(!value.toLowerCase().includes(forged), `${what} got the forged ${name}: ${value}`);
  }
  // Each of Portico's own fields is there once at most: the client's copy is never beside it.
  for (const name of own) {
    const count = got.rawHeaders.filter((n, i) => i % 2 === 0 && n.toLowerCase() === name).length;
    assert.ok(count <= 1, `${what} got ${name} ${count} times`);
  }
  return got;
}

describe('forged forwarding fields never reach a backend', () => {
  it('HTTP/1.1: X-Forwarded-For is the real client, the rest of what the client forged is gone', async () => {
    assert.equal(await forge('open.test'), '200');
    const got = lastClean(backend, 'the backend');
    assert.equal(got.headers['x-forwarded-for'], '127.0.0.1');
    assert.equal(got.headers['x-forwarded-proto'], 'http');
    assert.equal(got.headers['x-forwarded-host'], 'open.test');
  });

  it('with disableProxyXForwarded: none of them arrive, not even the client’s', async () => {
    assert.equal(await forge('off.test'), '200');
    const got = lastClean(backend, 'the backend');
    for (const name of PORTICO_SETS) assert.equal(got.headers[name], undefined, name);
  });

  it('forwarded authentication: the authentication server and the backend get Portico’s fields only', async () => {
    assert.equal(await forge('auth.test'), '200');
    const asked = lastClean(
      auth,
      'the authentication server',
      new Set([...PORTICO_SETS, 'x-forwarded-method', 'x-forwarded-uri']),
    );
    assert.equal(asked.headers['x-forwarded-for'], '127.0.0.1');
    assert.equal(asked.headers['x-forwarded-method'], 'GET');
    assert.equal(asked.headers['x-forwarded-uri'], '/path');
    assert.equal(asked.headers['x-forwarded-user'], undefined);
    const got = lastClean(backend, 'the backend');
    assert.equal(got.headers['x-forwarded-for'], '127.0.0.1');
    assert.equal(got.headers['x-forwarded-uri'], undefined);
  });

  it('behind a trusted proxy, the chain holds: the backend gets the address the proxy vouched for', async () => {
    // The peer (127.0.0.1) is trusted; it appended the real client after what the client forged.
    const chain = ['X-Forwarded-For', '6.6.6.6, 203.0.113.9'] as [string, string];
    const fields = FORGED.filter(([n]) => n !== 'X-Forwarded-For');
    const head = [...fields, chain].map(([n, v]) => `${n}: ${v}\r\n`).join('');
    const reply = await raw(
      portico.port,
      `GET /path HTTP/1.1\r\nHost: trusted.test\r\n${head}Connection: close\r\n\r\n`,
    );
    assert.match(reply, /^HTTP\/1\.1 200 /);
    const got = lastClean(backend, 'the backend');
    assert.equal(got.headers['x-forwarded-for'], '203.0.113.9');
  });

  it('HTTP/2: the same fields are dropped', async () => {
    const session = http2Connect(`https://localhost:${sport}`, {
      ca: TEST_CA,
    });
    try {
      const headers: Record<string, string | string[]> = {
        ':path': '/h2',
        ':authority': 'open.test',
      };
      for (const [name, value] of FORGED) {
        const lower = name.toLowerCase();
        const had = headers[lower];
        headers[lower] = had === undefined ? value : [had as string, value].flat();
      }
      const stream = session.request(headers);
      stream.end();
      stream.resume();
      const [response] = (await once(stream, 'response')) as [Record<string, string | number>];
      await once(stream, 'end');
      assert.equal(response[':status'], 200);
    } finally {
      session.close();
    }
    const got = lastClean(backend, 'the backend');
    assert.equal(got.url, '/h2');
    assert.equal(got.headers['x-forwarded-for'], '127.0.0.1');
    assert.equal(got.headers['x-forwarded-proto'], 'https');
  });
});
