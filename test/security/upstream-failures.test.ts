// Backends that fail the proxy: one that accepts and never answers, one whose body cannot be
// parsed, one whose every connection is taken. Each gets the client a precise status and the
// error log a line naming the backend, never a reset connection or an empty reply.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { request } from '../helpers/http.js';
import { assertRecovered, baseline, type Baseline } from './harness.js';
import { until } from '../helpers/wait.js';
import { spawnPortico, type PorticoProcess } from './portico-process.js';

/** A TCP backend that answers every request with `reply` (nothing at all when undefined). */
async function rawBackend(reply: string | undefined): Promise<RawBackend> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.once('data', () => {
      backend.requests++;
      if (reply !== undefined) socket.write(reply);
    });
  });
  server.on('close', () => sockets.forEach((s) => s.destroy()));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const close = server.close.bind(server);
  server.close = (cb?: (err?: Error) => void) => {
    for (const s of sockets) s.destroy();
    return close(cb);
  };
  const backend = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    server,
    requests: 0,
  };
  return backend;
}

interface RawBackend {
  readonly url: string;
  readonly server: Server;
  /** Connections that sent a request. */
  requests: number;
}

describe('backends that fail the proxy', () => {
  let silent: RawBackend;
  let garbled: RawBackend;
  let stalled: RawBackend;
  let portico: PorticoProcess;
  let base: Baseline;
  const get = (path: string) => request(portico.port, path, { headers: { host: 'localhost' } });

  before(async () => {
    silent = await rawBackend(undefined);
    garbled = await rawBackend(
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz-not-a-size\r\nhello\r\n0\r\n\r\n',
    );
    // A head and the first of 100 bytes, then nothing.
    stalled = await rawBackend('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nfirst');
    portico = await spawnPortico(
      'global:\n  loadModules: [rproxy]\n  proxyResponseTimeout: 500\n  proxyIdleTimeout: 700\n' +
        '  proxyMaxConnections: 1\n  proxyQueueLimit: 1\n  proxyQueueTimeout: 3000\n' +
        'hosts:\n  - domain: localhost\n    locations:\n' +
        `      - path: /silent\n        proxyTo: ${silent.url}\n` +
        `      - path: /garbled\n        proxyTo: ${garbled.url}\n` +
        `      - path: /stalled\n        proxyTo: ${stalled.url}\n`,
    );
    base = await baseline(portico, async () => {
      await get('/garbled');
    });
  });
  after(async () => {
    await portico?.stop();
    silent?.server.close();
    garbled?.server.close();
    stalled?.server.close();
  });

  it('a backend that never answers: 504 at proxyResponseTimeout, and a log line naming it', async (t) => {
    const started = Date.now();
    const r = await get('/silent');
    assert.equal(r.status, 504);
    assert.ok(Date.now() - started < 3000, `answered after ${Date.now() - started} ms`);
    const log = await until(() => portico.stderr(), {
      ok: (text) => text.includes('[upstream-timeout]'),
    });
    assert.match(log, new RegExp(`\\[upstream-timeout\\] proxy to ${silent.url}`));
    await assertRecovered(t, portico, base);
  });

  it('a body with an invalid chunk size: 502, not an empty reply', async (t) => {
    const r = await get('/garbled');
    assert.equal(r.status, 502);
    assert.match(portico.stderr(), new RegExp(`\\[upstream-failed\\] proxy to ${garbled.url}`));
    await assertRecovered(t, portico, base);
  });

  it('a body that stalls after its head: cut at proxyIdleTimeout, never completed', async (t) => {
    const cut = await get('/stalled').then(
      () => false,
      () => true,
    );
    assert.ok(cut, 'the response looked complete');
    const log = await until(() => portico.stderr(), {
      ok: (text) => text.includes(`proxy to ${stalled.url}: the response was cut`),
    });
    assert.match(
      log,
      new RegExp(
        `\\[upstream-timeout\\] proxy to ${stalled.url}: the response was cut after 5 body bytes`,
      ),
    );
    await assertRecovered(t, portico, base);
  });

  it('every connection busy and the queue full: 503 with Retry-After, at once', async (t) => {
    // One in flight (until proxyResponseTimeout), then two more: one waits, one is refused.
    const seen = silent.requests;
    const first = get('/silent');
    await until(() => silent.requests, { ok: (n) => n > seen, what: 'the request at the backend' });
    const started = Date.now();
    const answers = await Promise.all([first, get('/silent'), get('/silent')]);
    const refused = answers.filter((a) => a.status === 503);
    assert.deepEqual(answers.map((a) => a.status).sort(), [503, 504, 504]);
    assert.equal(refused[0]!.headers['retry-after'], '3');
    assert.ok(Date.now() - started < 2500, 'nobody waited for the queue timeout');
    assert.match(
      portico.stderr(),
      /\[upstream-busy\] proxy to .*: the queue is full \(1 wait\); 1 of 1 connections in flight, 0 of them this client.s/,
    );
    await assertRecovered(t, portico, base);
  });
});
