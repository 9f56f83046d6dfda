// Hostile PROXY protocol headers (proxyProtocol on, 127.0.0.1 the one trusted proxy): a header from
// a peer trustedProxies does not list, malformed v1 and v2 headers, a header sent a byte at a time
// and a v1 line past its 107 bytes are each refused by closing the connection (no HTTP answer), the
// error log says why once, the server keeps serving others meanwhile, and every descriptor comes
// back. A client that connects directly, without a header, is served as itself.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { request } from '../helpers/http.js';
import { logged } from '../helpers/wait.js';
import { assertRecovered, baseline, type Baseline, type Exchange } from './harness.js';
import { spawnPortico, type PorticoProcess } from './portico-process.js';

// The configuration's requestHeaderTimeout.
const HEAD_MS = 1000;
const V2_SIGNATURE = Buffer.from('0d0a0d0a000d0a515549540a', 'hex');

let p: PorticoProcess;
let base: Baseline;

before(async () => {
  p = await spawnPortico(
    `global:\n  wwwroot: www\n  proxyProtocol: true\n  trustedProxies: [127.0.0.1]\n  requestHeaderTimeout: ${HEAD_MS}\n`,
    { files: { 'www/index.html': 'hello' } },
  );
  base = await baseline(p, () => assertServed());
});

after(() => p?.stop());

/** A direct client (no header), from an address trustedProxies does not list, is served. */
async function assertServed(): Promise<void> {
  const reply = await request(p.port, '/index.html');
  assert.deepEqual([reply.status, reply.text], [200, 'hello']);
}

/**
 * From `from` (a loopback address), writes `pieces` one every `everyMs`, and reads until the
 * server closes the connection or `ms` pass.
 */
function send(
  from: string,
  pieces: readonly (string | Buffer)[],
  everyMs = 0,
  ms = 5000,
): Promise<Exchange> {
  return new Promise((resolve) => {
    const started = Date.now();
    let data = '';
    let closed = true;
    let drip: NodeJS.Timeout | undefined;
    const socket = connect({ port: p.port, host: '127.0.0.1', localAddress: from }, () => {
      let i = 0;
      const next = () => {
        if (i < pieces.length && !socket.destroyed) socket.write(pieces[i++]!);
        if (i === pieces.length) clearInterval(drip);
      };
      next();
      if (everyMs > 0) drip = setInterval(next, everyMs);
      else while (i < pieces.length) next();
    });
    const timer = setTimeout(() => {
      closed = false;
      socket.destroy();
    }, ms);
    socket.setEncoding('latin1').on('data', (d: string) => (data += d));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      clearInterval(drip);
      resolve({ data, closed, ms: Date.now() - started });
    });
  });
}

const REQUEST = 'GET /index.html HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n';

function v2(command: number, family: number, body: Buffer): Buffer {
  const head = Buffer.alloc(4);
  head[0] = command;
  head[1] = family;
  head.writeUInt16BE(body.length, 2);
  return Buffer.concat([V2_SIGNATURE, head, body]);
}

/** Refused: closed by the server with nothing sent back, and its reason in the error log. */
async function assertRefused(exchange: Promise<Exchange>, reason: RegExp): Promise<void> {
  const [result] = await Promise.all([exchange, assertServed()]);
  assert.equal(result.closed, true, 'the server closes the connection');
  assert.equal(result.data, '', 'a refused connection gets no HTTP answer');
  await logged(p.stderr, reason);
}

describe('PROXY protocol attacks', () => {
  it('refuses a header from a peer trustedProxies does not list, and says so once', async (t) => {
    const header = 'PROXY TCP4 203.0.113.9 127.0.0.1 5555 80\r\n';
    await assertRefused(
      send('127.0.0.2', [header + REQUEST]),
      /127\.0\.0\.2: a PROXY header from a peer trustedProxies does not list/,
    );
    // Again, and as a v2 header: refused, and the same line is not written again.
    await assertRefused(send('127.0.0.2', [header + REQUEST]), /does not list/);
    const address = Buffer.from([203, 0, 113, 9, 127, 0, 0, 1, 0x15, 0xb3, 0, 80]);
    await assertRefused(send('127.0.0.2', [v2(0x21, 0x11, address), REQUEST]), /does not list/);
    assert.equal(p.stderr().match(/127\.0\.0\.2: a PROXY header from a peer/g)?.length, 1);
    await assertRecovered(t, p, base);
  });

  it('serves a trusted proxy’s well-formed header, and its absence', async () => {
    for (const bytes of ['PROXY TCP4 203.0.113.9 127.0.0.1 5555 80\r\n' + REQUEST, REQUEST]) {
      const result = await send('127.0.0.1', [bytes]);
      assert.match(result.data, /^HTTP\/1\.1 200 OK/);
    }
  });

  it('refuses malformed v1 and v2 headers from a trusted proxy', async (t) => {
    const cases: [string | Buffer, RegExp][] = [
      ['PROXY TCP4 999.0.0.1 127.0.0.1 5555 80\r\n', /not of its protocol/],
      ['PROXY TCP4 203.0.113.9 127.0.0.1 5555 99999\r\n', /a v1 header with a bad port/],
      ['PROXY TCP5 203.0.113.9 127.0.0.1 5555 80\r\n', /a v1 header of an unknown protocol/],
      ['PROXY TCP4  203.0.113.9 127.0.0.1 5555 80\r\n', /without its five fields/],
      [v2(0x31, 0x11, Buffer.alloc(12)), /a v2 header of an unknown version or command/],
      [v2(0x21, 0x11, Buffer.alloc(6)), /a v2 header too short for its addresses/],
      [v2(0x21, 0x12, Buffer.alloc(12)), /a v2 header of a connection that is not TCP/],
    ];
    for (const [header, reason] of cases) {
      const bytes =
        typeof header === 'string'
          ? header + REQUEST
          : Buffer.concat([header, Buffer.from(REQUEST)]);
      await assertRefused(send('127.0.0.1', [bytes]), reason);
    }
    await assertRecovered(t, p, base);
  });

  it('cuts a header sent a byte at a time at the request-header time limit', async (t) => {
    const header = 'PROXY TCP4 203.0.113.9 127.0.0.1 5555 80\r\n';
    const result = send('127.0.0.1', [...header], 200, 15_000);
    await assertRefused(result, /no complete PROXY header within requestHeaderTimeout/);
    const { ms } = await result;
    assert.ok(ms >= HEAD_MS && ms < HEAD_MS + 3000, `cut after ${ms} ms`);
    await assertRecovered(t, p, base);
  });

  it('refuses a v1 line past 107 bytes without waiting for more', async (t) => {
    const result = send('127.0.0.1', [`PROXY TCP4 ${'1'.repeat(200)}`]);
    await assertRefused(result, /a v1 header longer than 107 bytes/);
    assert.ok((await result).ms < HEAD_MS, 'refused at once, not at the time limit');
    await assertRecovered(t, p, base);
  });
});
