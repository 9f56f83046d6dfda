// Slow clients over HTTP/1.1: a head sent a byte at a time (slowloris) is cut at the header limit
// with a 408, a body trickled in (slow POST) at the request limit, and neither keeps a connection,
// a backend request or a descriptor beyond that. The limits are shortened in the configuration so
// the test takes seconds; the defaults are the same code with larger numbers.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { request } from '../helpers/http.js';
import { assertRecovered, baseline, type Baseline, type Exchange } from './harness.js';
import { spawnPortico, type PorticoProcess } from './portico-process.js';

// The configuration's requestHeaderTimeout and requestTimeout below.
const HEAD_MS = 1000;
const REQUEST_MS = 2000;
const TIMEOUT =
  'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\nServer: Portico\r\n\r\n';

/** Requests the backend saw end: whole, or cut off (`aborted`). */
const ended: { url: string; aborted: boolean }[] = [];
let backend: Server;
let p: PorticoProcess;
let base: Baseline;

before(async () => {
  // A backend that answers once it has the whole body, as an upload handler does.
  backend = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      ended.push({ url: req.url ?? '', aborted: false });
      res.end('backend');
    });
    req.on('aborted', () => ended.push({ url: req.url ?? '', aborted: true }));
  });
  backend.listen(0, '127.0.0.1');
  await once(backend, 'listening');
  const { port } = backend.address() as AddressInfo;
  p = await spawnPortico(
    `global:
  wwwroot: www
  loadModules: [rproxy]
  requestHeaderTimeout: ${HEAD_MS}
  requestTimeout: ${REQUEST_MS}
  keepAliveTimeout: 1000
hosts:
  - domain: localhost
    locations:
      - path: /proxy
        proxyTo: http://127.0.0.1:${port}
`,
    { files: { 'www/index.html': 'hello' } },
  );
  base = await baseline(p, () => assertServed());
});

after(async () => {
  await p?.stop();
  backend?.closeAllConnections();
  backend?.close();
});

/**
 * Another client, static and proxied, is answered as usual. Once no attack is in flight the
 * backend closes its idle connections, which Portico's pool keeps for seconds (not an attack's
 * doing).
 */
async function assertServed(attackOver = true): Promise<void> {
  const file = await request(p.port, '/index.html');
  assert.deepEqual([file.status, file.text], [200, 'hello']);
  const proxied = await request(p.port, '/proxy/ok', { headers: { host: 'localhost' } });
  assert.deepEqual([proxied.status, proxied.text], [200, 'backend']);
  if (attackOver) backend.closeAllConnections();
}

/**
 * Writes `head`, then `piece` every `everyMs` until the server closes the connection or `ms`
 * pass; what came back, and when.
 */
function trickle(head: string, piece: string, everyMs: number, ms = 6000): Promise<Exchange> {
  return new Promise((resolve) => {
    const started = Date.now();
    let data = '';
    let closed = true;
    const socket = connect(p.port, '127.0.0.1', () => socket.write(head));
    const drip = setInterval(() => socket.write(piece), everyMs);
    const timer = setTimeout(() => {
      closed = false;
      socket.destroy();
    }, ms);
    socket.setEncoding('latin1').on('data', (d: string) => (data += d));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(drip);
      clearTimeout(timer);
      resolve({ data, closed, ms: Date.now() - started });
    });
  });
}

/** Cut by the server between the limit and the limit plus scheduling slack, never before. */
function assertCutAt(answer: Exchange, limitMs: number, what: string): void {
  assert.ok(answer.closed, `${what}: still open after ${answer.ms} ms`);
  assert.ok(
    answer.ms >= limitMs - 100 && answer.ms <= limitMs + 1500,
    `${what}: closed after ${answer.ms} ms, the limit is ${limitMs} ms`,
  );
}

describe('slow clients', () => {
  it('cuts a head sent a byte at a time at the header limit with 408 (slowloris)', async (t) => {
    const head = 'GET /index.html HTTP/1.1\r\nHost: localhost\r\nX-Pad: ';
    // Twenty at once, one byte each every 20 ms (also whole field lines, slowly): the limit is on
    // the head as a whole, however steadily its bytes come.
    const attacks = [
      ...Array.from({ length: 20 }, () => trickle(head, 'a', 20)),
      trickle('GET / HTTP/1.1\r\nHost: localhost\r\n', 'X-Pad: a\r\n', 100),
    ];
    await assertServed(false);
    const answers = await Promise.all(attacks);
    for (const [i, answer] of answers.entries()) {
      assert.equal(answer.data, TIMEOUT, `connection ${i}`);
      assertCutAt(answer, HEAD_MS, `connection ${i}`);
    }
    t.diagnostic(
      `cut after ${Math.min(...answers.map((a) => a.ms))}-${Math.max(...answers.map((a) => a.ms))} ms`,
    );
    await assertServed();
    await assertRecovered(t, p, base);
  });

  it('cuts a body trickled into the proxy at the request limit with 408, the backend request ended too (slow POST)', async (t) => {
    ended.length = 0;
    const head = (coding: string) =>
      `POST /proxy/upload HTTP/1.1\r\nHost: localhost\r\n${coding}\r\n\r\n`;
    const attacks = [
      ...Array.from({ length: 5 }, () => trickle(head('Content-Length: 100000'), 'a', 50)),
      ...Array.from({ length: 5 }, () =>
        trickle(head('Transfer-Encoding: chunked'), '1\r\na\r\n', 50),
      ),
    ];
    await assertServed(false);
    const answers = await Promise.all(attacks);
    for (const [i, answer] of answers.entries()) {
      assert.equal(answer.data, TIMEOUT, `connection ${i}`);
      assertCutAt(answer, REQUEST_MS, `connection ${i}`);
    }
    await assertServed();
    assert.deepEqual(
      ended.filter((r) => r.url === '/proxy/upload'),
      Array.from({ length: 10 }, () => ({ url: '/proxy/upload', aborted: true })),
    );
    await assertRecovered(t, p, base);
  });

  it('closes, after the response, a connection whose ignored body trickles past the request limit', async (t) => {
    // A file answers at once without reading the body (a GET that carries one); the connection must still not outlive
    // the request limit. The 408 that may follow the whole response is the server saying why it
    // closes (RFC 9110 §15.5.9), as Node's own servers do.
    const answer = await trickle(
      'GET /index.html HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100000\r\n\r\n',
      'a',
      50,
    );
    assertCutAt(answer, REQUEST_MS, 'the connection');
    assert.match(answer.data, /^HTTP\/1\.1 200 OK\r\n[^]*?\r\n\r\nhello/);
    const after = answer.data.slice(answer.data.indexOf('\r\n\r\nhello') + 9);
    assert.ok(['', TIMEOUT].includes(after), `after the response: ${JSON.stringify(after)}`);
    await assertServed();
    await assertRecovered(t, p, base);
  });
});
