// HTTP/2 attacks, as raw frames over TLS with h2 chosen by ALPN: invalid and connection-specific
// header fields, rapid reset (CVE-2023-44487), a CONTINUATION flood (CVE-2024-27983), an HPACK
// bomb, traversal in :path. Portico runs in a process of its own, judged by what each attack leaves
// of it; another client's session is served while the attack goes on.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { connect as http2Connect } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  errorCode,
  ErrorCode,
  Flag,
  frame,
  FrameType,
  hpack,
  RawH2,
  request,
  rstStream,
  status,
  type Frame,
} from './h2-frames.js';
import { assertMemory, assertRecovered, baseline, type Baseline } from './harness.js';
import { TEST_CA as CA } from '../helpers/tls.js';
import { spawnPortico, type PorticoProcess } from './portico-process.js';

/** Header fields of the requests the backend received. */
const seen: IncomingHttpHeaders[] = [];
let backend: Server;

/** A spawned Portico with HTTP/2, and its baseline. */
interface Target {
  readonly p: PorticoProcess;
  readonly sport: number;
  readonly base: Baseline;
}

before(async () => {
  backend = createServer((req, res) => {
    seen.push(req.headers);
    res.end('backend');
  });
  backend.listen(0, '127.0.0.1');
  await once(backend, 'listening');
});

after(() => {
  backend?.closeAllConnections();
  backend?.close();
});

async function start(): Promise<Target> {
  const { port } = backend.address() as AddressInfo;
  const p = await spawnPortico(
    `global:
  wwwroot: www
  loadModules: [rproxy]
hosts:
  - domain: localhost
    locations:
      - path: /proxy
        proxyTo: http://127.0.0.1:${port}
`,
    { tls: true, files: { 'www/index.html': 'hello', 'secret.txt': 'SECRET' } },
  );
  const sport = p.sport!;
  const base = await baseline(p, async () => {
    await assertServed(sport);
    // A raw session too: its first use loads what the attacks' sessions use.
    const c = await RawH2.open(sport, CA);
    try {
      await c.send(frame(FrameType.HEADERS, Flag.END_HEADERS | Flag.END_STREAM, 1, request('/')));
      await c.waitFor((f) => f.stream === 1 && f.type === FrameType.HEADERS);
    } finally {
      c.destroy();
    }
  });
  return { p, sport, base };
}

/** GETs over a session of its own, with node:http2: the status and the body. */
async function get(sport: number, path: string): Promise<[number, string]> {
  const session = http2Connect(`https://127.0.0.1:${sport}`, { ca: CA });
  session.on('error', () => undefined);
  try {
    const stream = session.request({ ':path': path, ':authority': 'localhost' });
    const [response] = (await once(stream, 'response')) as [IncomingHttpHeaders];
    let body = '';
    stream.setEncoding('utf8').on('data', (d: string) => (body += d));
    await once(stream, 'end');
    return [Number(response[':status']), body];
  } finally {
    session.close();
  }
}

/**
 * Another client is answered as usual, from a file and through the proxy; then the backend closes
 * its idle connections, which Portico's pool would keep for seconds (not the attacks' doing).
 */
async function assertServed(sport: number): Promise<void> {
  assert.deepEqual(await get(sport, '/index.html'), [200, 'hello']);
  assert.deepEqual(await get(sport, '/proxy/ok'), [200, 'backend']);
  backend.closeAllConnections();
}

/** On `c`, a GET of index.html on `stream`: the status of its answer (the session still serves). */
async function answered(c: RawH2, stream: number): Promise<number | undefined> {
  const block = request('/index.html');
  await c.send(frame(FrameType.HEADERS, Flag.END_HEADERS | Flag.END_STREAM, stream, block));
  const head = await c.waitFor((f) => f.stream === stream && f.type === FrameType.HEADERS);
  return head && status(head);
}

const isGoaway = (f: Frame) => f.type === FrameType.GOAWAY;

describe('HTTP/2 attacks', () => {
  let target: Target;
  let p: PorticoProcess;
  let sport: number;
  let base: Baseline;
  before(async () => {
    target = await start();
    ({ p, sport, base } = target);
  });
  after(() => target?.p.stop());

  it('drops header fields with CR, LF or NUL in their values: nothing is injected', async (t) => {
    // RFC 9113 §8.2.1 makes such a request malformed; nghttp2 drops the field and serves the rest,
    // which is as safe: what matters is that no part of the field reaches the backend.
    seen.length = 0;
    const c = await RawH2.open(sport, CA);
    try {
      const values = ['a\r\nx-injected: 1', 'a\nx-injected: 1', 'a\rx-injected: 1', 'a\0b'];
      let stream = 1;
      for (const value of values) {
        const block = request('/proxy/inject', [
          ['x-evil', value],
          ['x-good', 'kept'],
        ]);
        await c.send(frame(FrameType.HEADERS, Flag.END_HEADERS | Flag.END_STREAM, stream, block));
        const head = await c.waitFor((f) => f.stream === stream && f.type === FrameType.HEADERS);
        assert.equal(head && status(head), 200, JSON.stringify(value));
        stream += 2;
      }
      // Names with a colon or a space are not names: dropped the same way.
      const names = request('/proxy/inject', [
        ['x-evil:x-injected', '1'],
        ['x-evil x-injected', '1'],
        ['x-good', 'kept'],
      ]);
      await c.send(frame(FrameType.HEADERS, Flag.END_HEADERS | Flag.END_STREAM, stream, names));
      const head = await c.waitFor((f) => f.stream === stream && f.type === FrameType.HEADERS);
      assert.equal(head && status(head), 200);
    } finally {
      c.destroy();
    }
    assert.equal(seen.length, 5);
    for (const headers of seen) {
      assert.equal(headers['x-good'], 'kept');
      for (const name of Object.keys(headers)) assert.doesNotMatch(name, /evil|injected/);
      for (const value of Object.values(headers)) assert.doesNotMatch(String(value), /[\r\n\0]/);
    }
    await assertServed(sport);
    await assertRecovered(t, p, base);
  });

  it('resets streams with upper-case or connection-specific header fields; the session goes on', async (t) => {
    seen.length = 0;
    const c = await RawH2.open(sport, CA);
    const malformed: Record<string, Buffer> = {
      'an upper-case name': request('/proxy/x', [['X-Upper', 'a']]),
      connection: request('/proxy/x', [['connection', 'keep-alive']]),
      'transfer-encoding': request('/proxy/x', [['transfer-encoding', 'chunked']]),
      'keep-alive': request('/proxy/x', [['keep-alive', 'timeout=5']]),
      'proxy-connection': request('/proxy/x', [['proxy-connection', 'keep-alive']]),
      upgrade: request('/proxy/x', [['upgrade', 'h2c']]),
      'te other than trailers': request('/proxy/x', [['te', 'gzip']]),
      'a pseudo-header after a field': Buffer.concat([
        request('/proxy/x'),
        hpack.literal(':method', 'POST'),
      ]),
      'CR LF in :path': request('/proxy/x\r\nx-injected: 1'),
    };
    try {
      let stream = 1;
      for (const [name, block] of Object.entries(malformed)) {
        await c.send(frame(FrameType.HEADERS, Flag.END_HEADERS | Flag.END_STREAM, stream, block));
        const reset = await c.waitFor((f) => f.stream === stream || isGoaway(f));
        assert.equal(reset?.type, FrameType.RST_STREAM, name);
        assert.equal(errorCode(reset!), ErrorCode.PROTOCOL_ERROR, name);
        stream += 2;
      }
      assert.equal(await answered(c, stream), 200, 'the same session serves the next request');
    } finally {
      c.destroy();
    }
    assert.deepEqual(seen, [], 'nothing reached the backend');
    await assertServed(sport);
    await assertRecovered(t, p, base);
  });

  it('ends a session that floods CONTINUATION frames without END_HEADERS (CVE-2024-27983)', async (t) => {
    for (const piece of [hpack.literal('x-flood', 'a'.repeat(100)), Buffer.alloc(0)]) {
      const c = await RawH2.open(sport, CA);
      let sent = 0;
      try {
        await c.send(frame(FrameType.HEADERS, 0, 1, request('/index.html')));
        // At most 20,000 frames: 2 MB of header block, or 180 KB of empty frames.
        for (; sent < 20_000; sent += 100) {
          const frames = Array.from({ length: 100 }, () =>
            frame(FrameType.CONTINUATION, 0, 1, piece),
          );
          if (!(await c.send(...frames)) || c.frames.some(isGoaway)) break;
          if (sent === 200) assert.deepEqual(await get(sport, '/index.html'), [200, 'hello']);
        }
        // The server closes with frames of the flood unread, which resets the connection: its
        // GOAWAY, sent just before, is lost when the reset overtakes it.
        const goaway = await c.waitFor(isGoaway);
        const closed = await c.closedWithin(3000);
        const how = goaway ? `GOAWAY ${errorCode(goaway)}` : `no GOAWAY, ${c.error ?? 'no error'}`;
        t.diagnostic(`${piece.length}-byte frames: ${how}, closed ${closed}, ${sent} sent`);
        assert.ok(closed, `the connection was left open after ${sent} frames`);
        if (goaway) assert.equal(errorCode(goaway), ErrorCode.INTERNAL_ERROR);
        else assert.ok(['ECONNRESET', 'EPIPE'].includes(c.error ?? ''), `closed with ${c.error}`);
      } finally {
        c.destroy();
      }
    }
    await assertServed(sport);
    await assertRecovered(t, p, base);
  });

  it('resets a stream whose header block decodes to a bomb; the session goes on', async (t) => {
    // 4 KB into the dynamic table, then 16,000 one-byte references to it: 20 KB on the wire that
    // would decode to 64 MB of header fields. Ten such streams on one session.
    const bomb = Buffer.concat([
      request('/index.html'),
      hpack.indexing('x-bomb', 'a'.repeat(4000)),
      ...Array.from({ length: 16_000 }, () => hpack.indexed(62)),
    ]);
    const c = await RawH2.open(sport, CA);
    try {
      for (let stream = 1; stream <= 19; stream += 2) {
        const frames: Buffer[] = [];
        for (let at = 0; at < bomb.length; at += 16_384) {
          const last = at + 16_384 >= bomb.length;
          frames.push(
            frame(
              at === 0 ? FrameType.HEADERS : FrameType.CONTINUATION,
              (at === 0 ? Flag.END_STREAM : 0) | (last ? Flag.END_HEADERS : 0),
              stream,
              bomb.subarray(at, at + 16_384),
            ),
          );
        }
        await c.send(...frames);
        const reset = await c.waitFor((f) => f.stream === stream || isGoaway(f));
        assert.equal(reset?.type, FrameType.RST_STREAM, `stream ${stream}`);
        assert.equal(errorCode(reset!), ErrorCode.ENHANCE_YOUR_CALM);
      }
      // Each refused block was still decoded, so both ends' tables agree: a request that refers to
      // the entry once is within the limits and served.
      const single = Buffer.concat([request('/index.html'), hpack.indexed(62)]);
      await c.send(frame(FrameType.HEADERS, Flag.END_HEADERS | Flag.END_STREAM, 21, single));
      const head = await c.waitFor((f) => f.stream === 21 && f.type === FrameType.HEADERS);
      assert.equal(head && status(head), 200);
    } finally {
      c.destroy();
    }
    await assertServed(sport);
    await assertRecovered(t, p, base);
  });

  it('never serves a file outside wwwroot for a :path that climbs out', async (t) => {
    const c = await RawH2.open(sport, CA);
    try {
      const paths: [string, number][] = [
        ['/../secret.txt', 404],
        ['/%2e%2e/secret.txt', 404],
        ['/%2e%2e%2fsecret.txt', 404],
        ['/..%5csecret.txt', 404],
        ['/%252e%252e/secret.txt', 404],
        ['/%c0%ae%c0%ae/secret.txt', 400],
        ['/secret.txt%00', 400],
      ];
      let stream = 1;
      for (const [path, expected] of paths) {
        await c.send(
          frame(FrameType.HEADERS, Flag.END_HEADERS | Flag.END_STREAM, stream, request(path)),
        );
        const done = await c.waitFor(
          (f) => f.stream === stream && (f.flags & Flag.END_STREAM) !== 0,
        );
        assert.ok(done, `${path}: no answer`);
        const head = c.frames.find((f) => f.stream === stream && f.type === FrameType.HEADERS);
        assert.equal(head && status(head), expected, path);
        const body = Buffer.concat(
          c.frames
            .filter((f) => f.stream === stream && f.type === FrameType.DATA)
            .map((f) => f.payload),
        );
        assert.doesNotMatch(body.toString('latin1'), /SECRET/, path);
        stream += 2;
      }
    } finally {
      c.destroy();
    }
    await assertServed(sport);
    await assertRecovered(t, p, base);
  });
});

// Rapid reset on a server of its own: a session Node has refused stays open with its descriptor
// (below), which would be counted against every test after it.
describe('HTTP/2 rapid reset (CVE-2023-44487)', () => {
  let target: Target;
  let p: PorticoProcess;
  let sport: number;
  let base: Baseline;
  before(async () => {
    target = await start();
    ({ p, sport, base } = target);
  });
  after(() => target?.p.stop());

  /** Streams opened and cancelled at once, in batches of 500, until GOAWAY or 20,000 of them. */
  async function rapidReset(
    c: RawH2,
    during?: () => Promise<void>,
  ): Promise<[Frame | undefined, number]> {
    let sent = 0;
    for (let batch = 0; batch < 40 && !c.frames.some(isGoaway); batch++) {
      const frames: Buffer[] = [];
      for (let i = 0; i < 500; i++) {
        const id = 1 + 2 * sent++;
        const block = request('/index.html');
        frames.push(frame(FrameType.HEADERS, Flag.END_HEADERS | Flag.END_STREAM, id, block));
        frames.push(rstStream(id));
      }
      if (!(await c.send(...frames))) break;
      if (batch === 0) await during?.();
    }
    return [await c.waitFor(isGoaway), sent];
  }

  it('refuses the session with GOAWAY after a bounded number of streams, serving others meanwhile', async (t) => {
    const c = await RawH2.open(sport, CA);
    try {
      const [goaway, sent] = await rapidReset(c, async () =>
        assert.deepEqual(await get(sport, '/index.html'), [200, 'hello']),
      );
      assert.ok(goaway, `no GOAWAY after ${sent} streams opened and reset`);
      const last = goaway.payload.readUInt32BE(0);
      t.diagnostic(`GOAWAY (last stream ${last}) with ${sent} streams sent`);
      // Portico allows a burst of 500 resets (nghttp2 1,000), then ends the session this way.
      assert.equal(errorCode(goaway), ErrorCode.ENHANCE_YOUR_CALM);
      assert.ok(last < 4000, `the session went on to stream ${last}`);
      assert.deepEqual(await get(sport, '/index.html'), [200, 'hello']);
    } finally {
      c.destroy();
    }
    await assertServed(sport);
    assertMemory(t, p, base);
  });

  it('closes the connection after that GOAWAY and gives its descriptor back', async (t) => {
    // RFC 9113 §5.4.1: after a GOAWAY for a connection error the endpoint MUST close the TCP
    // connection. Left open, the session no longer reads, so even the client's own close goes
    // unnoticed: the descriptor stays until the session watch's unanswered ping (45 s measured).
    const c = await RawH2.open(sport, CA);
    try {
      const [goaway] = await rapidReset(c);
      assert.ok(goaway, 'no GOAWAY');
      assert.ok(await c.closedWithin(3000), 'the connection is still open 3 s after GOAWAY');
    } finally {
      c.destroy();
    }
    await assertServed(sport);
    await assertRecovered(t, p, base);
  });
});
