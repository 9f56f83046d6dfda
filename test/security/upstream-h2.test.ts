// HTTP/2 (h2c) backends that fail the proxy, and a client that abandons what it opened: a backend
// that resets a stream mid-body, one that never answers, one that stalls after its head, a
// listener that never speaks HTTP/2, and a gRPC-like client that opens hundreds of streams and
// drops its connection. The client is cut (never left hanging), the error log names the backend,
// the backend's streams are cancelled, and the server keeps serving with its descriptors given back.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http2, { type Http2Session, type ServerHttp2Stream } from 'node:http2';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { request } from '../helpers/http.js';
import { until } from '../helpers/wait.js';
import { assertRecovered, baseline, h2Connect, type Baseline } from './harness.js';
import { spawnPortico, type PorticoProcess } from './portico-process.js';

interface H2Backend {
  readonly url: string;
  /** Streams open at the backend now, and opened in all. */
  readonly streams: { open: number; opened: number };
  close(): void;
}

/** An h2c backend on 127.0.0.1 that does `onStream` with each stream. */
async function h2Backend(onStream: (stream: ServerHttp2Stream) => void): Promise<H2Backend> {
  const server = http2.createServer();
  const sessions = new Set<Http2Session>();
  const streams = { open: 0, opened: 0 };
  server.on('session', (s: Http2Session) => {
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
    s.on('error', () => undefined);
  });
  server.on('stream', (stream: ServerHttp2Stream) => {
    streams.open++;
    streams.opened++;
    stream.on('close', () => streams.open--);
    stream.on('error', () => undefined);
    onStream(stream);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `h2c://127.0.0.1:${(server.address() as AddressInfo).port}`,
    streams,
    close: () => {
      for (const s of sessions) s.destroy();
      server.close();
    },
  };
}

/** A TCP listener that accepts and never says a word (no HTTP/2 SETTINGS). */
async function mute(): Promise<{ url: string; server: Server }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  });
  server.on('close', () => sockets.forEach((s) => s.destroy()));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const close = server.close.bind(server);
  server.close = (cb?: (err?: Error) => void) => {
    for (const s of sockets) s.destroy();
    return close(cb);
  };
  return { url: `h2c://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('h2c backends that fail the proxy, clients that abandon their streams', () => {
  let resetting: H2Backend;
  let silent: H2Backend;
  let stalling: H2Backend;
  let holding: H2Backend;
  let answering: H2Backend;
  let noH2: { url: string; server: Server };
  let portico: PorticoProcess;
  let base: Baseline;

  before(async () => {
    // A head, 5 bytes of body, then a reset (close(code) would end the stream cleanly first).
    resetting = await h2Backend((stream) => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' });
      stream.write('first', () => stream.destroy(new Error('reset')));
    });
    silent = await h2Backend(() => undefined);
    stalling = await h2Backend((stream) => {
      stream.respond({ ':status': 200 });
      stream.write('first');
    });
    // A gRPC server stream: the head, then a message every 200 ms until the call is cancelled.
    holding = await h2Backend((stream) => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' });
      stream.resume();
      const timer = setInterval(() => stream.write('tick'), 200);
      stream.on('close', () => clearInterval(timer));
    });
    answering = await h2Backend((stream) => {
      stream.respond({ ':status': 200 });
      stream.end('fine');
    });
    noH2 = await mute();
    portico = await spawnPortico(
      'global:\n  loadModules: [rproxy]\n  proxyConnectTimeout: 500\n' +
        '  proxyResponseTimeout: 500\n  proxyIdleTimeout: 700\n' +
        'hosts:\n  - domain: localhost\n    locations:\n' +
        `      - path: /reset\n        proxyTo: ${resetting.url}\n` +
        `      - path: /silent\n        proxyTo: ${silent.url}\n` +
        `      - path: /stall\n        proxyTo: ${stalling.url}\n` +
        `      - path: /hold\n        proxyTo: ${holding.url}\n` +
        `      - path: /fine\n        proxyTo: ${answering.url}\n` +
        `      - path: /mute\n        proxyTo: ${noH2.url}\n`,
      { tls: true },
    );
    // The backend's session closes after its idle time; the baseline waits for it.
    base = await baseline(portico, async () => {
      assert.equal((await get('/fine')).status, 200);
    });
  });
  after(async () => {
    await portico?.stop();
    for (const b of [resetting, silent, stalling, holding, answering]) b?.close();
    noH2?.server.close();
  });

  // HTTP/1.1 over TLS: with `tls`, the plain port only redirects.
  const get = (path: string) =>
    request(portico.sport!, path, { headers: { host: 'localhost' }, cut: 'resolve', tls: true });

  /** Whether the rest of the server still answers. */
  async function stillServing(): Promise<void> {
    const r = await get('/fine');
    assert.equal(r.status, 200);
    assert.equal(r.text, 'fine');
  }

  it('a backend that resets mid-body: the HTTP/2 client’s stream is reset, the HTTP/1.1 one cut', async (t) => {
    const session = h2Connect(portico.sport!);
    const stream = session.request({ ':path': '/reset', ':authority': 'localhost' });
    stream.on('error', () => undefined);
    let received = '';
    stream.setEncoding('utf8').on('data', (d: string) => (received += d));
    let ended = false;
    stream.on('end', () => (ended = true));
    await new Promise((resolve) => stream.on('close', resolve));
    session.close();
    assert.equal(received, 'first');
    assert.equal(ended, false, 'a cut body never ends cleanly');
    assert.notEqual(stream.rstCode, 0, 'the stream was reset');

    const cut = await get('/reset');
    assert.equal(cut.status, 200);
    assert.equal(cut.complete, false, 'the HTTP/1.1 response was cut, not completed');
    assert.match(
      portico.stderr(),
      new RegExp(
        `\\[upstream-failed\\] proxy to ${resetting.url}: the response was cut after 5 body bytes: Stream closed with error code NGHTTP2_INTERNAL_ERROR`,
      ),
    );
    await stillServing();
    await assertRecovered(t, portico, base);
  });

  it('a backend that never answers: 504 at proxyResponseTimeout, its stream cancelled', async (t) => {
    const started = Date.now();
    const r = await get('/silent');
    assert.equal(r.status, 504);
    assert.ok(Date.now() - started < 3000, `answered after ${Date.now() - started} ms`);
    assert.match(
      portico.stderr(),
      new RegExp(`\\[upstream-timeout\\] proxy to ${silent.url}: no response head within 500 ms`),
    );
    await until(() => silent.streams.open, { ok: (n) => n === 0, what: 'the stream cancelled' });
    await assertRecovered(t, portico, base);
  });

  it('a backend that stalls after its head: cut at proxyIdleTimeout', async (t) => {
    const r = await get('/stall');
    assert.equal(r.complete, false);
    await until(portico.stderr, {
      ok: (text) =>
        text.includes(
          `[upstream-timeout] proxy to ${stalling.url}: the response was cut after 5 body bytes`,
        ),
    });
    await until(() => stalling.streams.open, { ok: (n) => n === 0 });
    await assertRecovered(t, portico, base);
  });

  it('a listener that never speaks HTTP/2: 504 at proxyConnectTimeout', async (t) => {
    const r = await get('/mute');
    assert.equal(r.status, 504);
    assert.match(
      portico.stderr(),
      new RegExp(`\\[upstream-timeout\\] proxy to ${noH2.url}: no HTTP/2 connection within 500 ms`),
    );
    await stillServing();
    await assertRecovered(t, portico, base);
  });

  it('300 streams from 4 connections, abandoned: each cancelled at the backend, fds given back', async (t) => {
    const sessions = Array.from({ length: 4 }, () => h2Connect(portico.sport!));
    const opened = holding.streams.opened;
    for (const session of sessions)
      for (let i = 0; i < 75; i++) {
        const stream = session.request(
          { ':path': `/hold/${i}`, ':method': 'POST', ':authority': 'localhost', te: 'trailers' },
          { endStream: false },
        );
        stream.on('error', () => undefined);
        stream.write('unfinished');
      }
    // 32 per client connection (proxyMaxConnectionsPerClient), 128 at the backend at once
    // (proxyMaxConnections); the rest wait in its queue.
    await until(() => holding.streams.open, {
      ok: (n) => n === 128,
      what: 'the backend’s 128 streams open',
    });
    await stillServing();
    for (const session of sessions) session.destroy();
    await until(() => holding.streams.open, {
      ok: (n) => n === 0,
      what: 'every stream at the backend cancelled',
    });
    assert.ok(holding.streams.opened - opened <= 300);
    await stillServing();
    await assertRecovered(t, portico, base);
  });
});
