// A path answered by `respond: {abort: true}` under a flood: hundreds of HTTP/1.1 connections at
// once, requests pipelined behind the aborted one, an Upgrade to it, and one HTTP/2 session
// hammering it past the reset budget. Each gets nothing; the server stays up, serves another
// client meanwhile, and gives back its descriptors and memory.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  assertRecovered,
  baseline,
  exchange,
  h2Body,
  h2Connect,
  type Baseline,
} from './harness.js';
import { spawnPortico, type PorticoProcess } from './portico-process.js';

let p: PorticoProcess;
let base: Baseline;

before(async () => {
  p = await spawnPortico(
    `global:
  wwwroot: www
  disableToHTTPSRedirect: true
hosts:
  - domain: localhost
    wwwroot: www
    locations:
      - path: /blocked
        respond:
          abort: true
`,
    { tls: true, files: { 'www/index.html': 'hello' } },
  );
  base = await baseline(p, async () => {
    assert.equal((await h2Body(p.sport!, '/')).toString(), 'hello');
    const served = await exchange(
      p.port,
      'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n',
    );
    assert.match(served.data, /^HTTP\/1\.1 200 /);
  });
});
after(() => p?.stop());

/** Another client's request meanwhile: answered as usual. */
async function assertServed(): Promise<void> {
  const r = await exchange(
    p.port,
    'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n',
  );
  assert.match(r.data, /^HTTP\/1\.1 200 [^]*\r\n\r\nhello$/);
}

describe('respond abort under a flood', () => {
  it('closes 300 HTTP/1.1 connections at once without a byte, pipelined requests and an Upgrade too', async (t) => {
    const get = 'GET /blocked HTTP/1.1\r\nHost: localhost\r\n\r\n';
    const attempts = [
      ...Array.from({ length: 300 }, () => exchange(p.port, get)),
      exchange(p.port, get + 'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n'),
      exchange(
        p.port,
        'GET /blocked HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
      ),
    ];
    const served = assertServed();
    for (const r of await Promise.all(attempts)) {
      assert.equal(r.closed, true, 'the server closed it');
      assert.equal(r.data, '', 'without a byte, the pipelined request dropped with it');
    }
    await served;
    await assertRecovered(t, p, base);
  });

  it('resets each stream of an HTTP/2 session, which its reset budget ends, and serves others', async (t) => {
    const session = h2Connect(p.sport!);
    const closed = new Promise((resolve) => session.on('close', resolve));
    const codes = new Map<number, number>();
    let answered = 0;
    const streams = Array.from({ length: 700 }, () => {
      const stream = session.request({ ':path': '/blocked' }, { endStream: true });
      stream.on('response', () => answered++);
      stream.on('error', () => undefined);
      stream.resume();
      return new Promise<void>((resolve) =>
        stream.on('close', () => {
          codes.set(stream.rstCode, (codes.get(stream.rstCode) ?? 0) + 1);
          resolve();
        }),
      );
    });
    await assertServed();
    await Promise.all(streams);
    await closed;
    assert.equal(answered, 0, 'no stream got a response head');
    t.diagnostic(`reset codes: ${JSON.stringify([...codes])}`);
    assert.ok((codes.get(8) ?? 0) >= 400, 'most reset with CANCEL before the budget ran out');
    assert.equal((await h2Body(p.sport!, '/')).toString(), 'hello', 'a new session is served');
    await assertRecovered(t, p, base);
  });
});
