// Clients that hold what they are given: HTTP/2 streams opened by the thousand behind a shut
// flow-control window, control frames flooded and never read, an HTTP/1.1 download never read.
// Each must cost the server a bounded number of descriptors, for a bounded time.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect as tlsConnect, type ConnectionOptions, type TLSSocket } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { assertRecovered, baseline, h2Body, h2Connect, type Baseline } from './harness.js';
import { h2TlsOptions, TEST_CA } from '../helpers/tls.js';
import { until } from '../helpers/wait.js';
import { spawnPortico, type PorticoProcess } from './portico-process.js';

const BIG = Buffer.alloc(1024 * 1024, 'x');
// Larger than every buffer between the two ends, so a reader that stops holds its response (a
// sparse file: no disk, no memory).
const HUGE = 256 * 1024 * 1024;

/** Writes `chunk` up to `times` times as fast as the server reads it, for at most `ms`. */
async function flood(socket: TLSSocket, chunk: Buffer, times: number, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  for (let i = 0; i < times && Date.now() < deadline && !socket.destroyed; i++) {
    if (socket.write(chunk)) continue;
    const signal = AbortSignal.timeout(Math.max(1, deadline - Date.now()));
    await once(socket, 'drain', { signal }).catch(() => undefined);
  }
}

/** A TLS connection that negotiated h2 and sent its preface and an empty SETTINGS, nothing more. */
async function rawH2(sport: number, allowHalfOpen: boolean): Promise<TLSSocket> {
  const socket = tlsConnect(h2TlsOptions(sport, { allowHalfOpen } as ConnectionOptions));
  socket.on('error', () => undefined);
  await once(socket, 'secureConnect');
  socket.write('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
  socket.write(Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]));
  return socket;
}

/** Answers every PING the server sends (with its ACK) and SETTINGS with theirs; reads the rest. */
function answerPings(socket: TLSSocket): void {
  let pending = Buffer.alloc(0);
  socket.on('data', (data: Buffer) => {
    pending = Buffer.concat([pending, data]);
    while (pending.length >= 9 && pending.length >= 9 + pending.readUIntBE(0, 3)) {
      const length = pending.readUIntBE(0, 3);
      const [type, flags] = [pending[3], pending[4]! & 1];
      if (!flags && (type === 6 || type === 4) && socket.writable) {
        const head = Buffer.from(pending.subarray(0, 9));
        head[4] = 1;
        if (type === 4) head.writeUIntBE(0, 0, 3);
        socket.write(
          Buffer.concat([head, type === 6 ? pending.subarray(9, 9 + length) : Buffer.alloc(0)]),
        );
      }
      pending = pending.subarray(9 + length);
    }
  });
}

describe('HTTP/2 and HTTP/1.1 clients that hold what they are given', () => {
  let portico: PorticoProcess;
  let base: Baseline;

  before(async () => {
    portico = await spawnPortico(
      'global:\n  wwwroot: .\n  sendTimeout: 1500\n  http2Settings:\n    pingTimeout: 500\n    idleTimeout: 500\n',
      { tls: true, files: { 'big.bin': BIG, 'index.html': 'hello' } },
    );
    writeFileSync(join(portico.dir, 'huge.bin'), '');
    truncateSync(join(portico.dir, 'huge.bin'), HUGE);
    base = await baseline(portico, async () => {
      assert.equal((await h2Body(portico.sport!, '/big.bin')).length, BIG.length);
    });
  });
  after(() => portico?.stop());

  it('advertises a stream limit, and streams stalled by a shut window are reset at the send timeout', async (t) => {
    const session = h2Connect(portico.sport!, { initialWindowSize: 0 });
    await once(session, 'remoteSettings');
    assert.equal(session.remoteSettings.maxConcurrentStreams, 128);
    const codes: number[] = [];
    let opened = 0;
    // More than the limit: the server refuses or the client holds back the rest.
    for (let i = 0; i < 400; i++) {
      const stream = session.request({ ':path': '/huge.bin' });
      stream.on('response', () => opened++);
      stream.on('error', () => undefined);
      stream.on('close', () => codes.push(stream.rstCode ?? 0));
    }
    await until(() => opened, { ok: (n) => n >= 128, what: '128 streams opened' });
    // One descriptor per open file at most, and no more open streams than advertised.
    assert.ok(portico.fds() <= base.fds + 1 + 128, `${portico.fds()} descriptors`);
    // Another client is served meanwhile.
    assert.equal((await h2Body(portico.sport!, '/index.html')).length, 5);
    // The client answers PINGs (node:http2 does), so only the send timeout ends its streams.
    await until(() => codes.filter((c) => c !== 0).length, {
      ok: (n) => n >= 128,
      what: '128 streams reset',
    });
    assert.ok(!session.destroyed, 'the connection itself stays open');
    session.destroy();
    await assertRecovered(t, portico, base);
  });

  it('a PING flood whose answers are never read, then a vanished client, leaves no descriptor', async (t) => {
    const ping = Buffer.concat(
      Array.from({ length: 1000 }, () =>
        Buffer.from([0, 0, 8, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
      ),
    );
    const sockets = await Promise.all(
      Array.from({ length: 10 }, async () => {
        const socket = await rawH2(portico.sport!, false);
        // Never read: the server's answers pile up until its writes stop.
        socket.pause();
        await flood(socket, ping, 200, 2000);
        return socket;
      }),
    );
    // Another client is served meanwhile.
    assert.equal((await h2Body(portico.sport!, '/index.html')).length, 5);
    for (const socket of sockets) socket.destroy();
    await assertRecovered(t, portico, base, 10_000);
  });

  it('a client that answers PINGs but never closes its side after GOAWAY leaves no descriptor', async (t) => {
    const clients = await Promise.all(
      Array.from({ length: 5 }, async () => {
        const socket = await rawH2(portico.sport!, true);
        answerPings(socket);
        return socket;
      }),
    );
    try {
      // Idle past idleTimeout: GOAWAY and the server's FIN come, the client's never does.
      await assertRecovered(t, portico, base, 8_000);
    } finally {
      for (const socket of clients) socket.destroy();
    }
  });

  it('an HTTP/1.1 client that stops reading its download is cut at the send timeout', async (t) => {
    // HTTP/1.1 over TLS (the plain port redirects to HTTPS here).
    const socket = tlsConnect(
      {
        host: '127.0.0.1',
        port: portico.sport!,
        ca: TEST_CA,
        servername: 'localhost',
        ALPNProtocols: ['http/1.1'],
      },
      () => socket.write('GET /huge.bin HTTP/1.1\r\nHost: localhost\r\n\r\n'),
    );
    socket.on('error', () => undefined);
    // Reads the head, then nothing more.
    await once(socket, 'data');
    socket.pause();
    const started = Date.now();
    await until(() => portico.fds(), { ok: (n) => n > base.fds, what: 'the connection open' });
    await assertRecovered(t, portico, base, 8_000);
    const ms = Date.now() - started;
    assert.ok(ms >= 1000, `cut after ${ms} ms, before the send timeout`);
    socket.destroy();
  });
});
