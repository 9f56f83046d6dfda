// A flood of rate-limit keys: twenty thousand requests, each with an X-Api-Key of its own,
// against a limit kept per API key that remembers a thousand. Each key is a new bucket, so each
// request passes; the limit must keep no more keys than its bound (the first of them forgotten:
// a client's spent bucket goes once that many newer keys came, as nginx's zone forgets its least
// recently used state when full), the server must serve others meanwhile, and its memory and
// descriptors come back.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { assertRecovered, baseline, h2Connect, type Baseline } from './harness.js';
import { spawnPortico, type PorticoProcess } from './portico-process.js';

const FLOOD = 20_000;
const MAX_KEYS = 1000;
const AT_ONCE = 100;

/** A plain HTTP GET of / from a client bound to `address`: its status. */
function statusFrom(port: number, address: string): Promise<number> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path: '/', localAddress: address, agent: false }, (res) =>
      res.resume().on('end', () => resolve(res.statusCode!)),
    )
      .on('error', reject)
      .end();
  });
}

/** `count` GETs over one HTTP/2 connection, `AT_ONCE` at a time, each with a key of its own. */
async function flood(sport: number, count: number, from = 0): Promise<Map<number, number>> {
  const session = h2Connect(sport);
  const statuses = new Map<number, number>();
  const one = (i: number) =>
    new Promise<void>((resolve, reject) => {
      const stream = session.request({ ':path': '/', 'x-api-key': `made-up key ${i}` });
      stream.on('response', (head) => {
        const status = Number(head[':status']);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      });
      stream.on('error', reject);
      stream.resume().on('end', resolve);
    });
  try {
    for (let i = 0; i < count; i += AT_ONCE)
      await Promise.all(
        Array.from({ length: Math.min(AT_ONCE, count - i) }, (_, j) => one(from + i + j)),
      );
  } finally {
    session.close();
  }
  return statuses;
}

/** The statuses of `count` GETs in a row with one X-Api-Key. */
async function h2Statuses(sport: number, key: string, count: number): Promise<number[]> {
  const session = h2Connect(sport);
  const out: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const stream = session.request({ ':path': '/', 'x-api-key': key });
      const [head] = (await once(stream, 'response')) as [Record<string, unknown>];
      out.push(Number(head[':status']));
      await once(stream.resume(), 'end');
    }
  } finally {
    session.close();
  }
  return out;
}

const linux = process.platform === 'linux';

describe(
  'a flood of rate-limit keys',
  { skip: !linux && 'clients of other addresses need Linux loopback' },
  () => {
    let portico: PorticoProcess;
    let base: Baseline;

    before(async () => {
      portico = await spawnPortico(
        'global:\n  wwwroot: .\n  disableToHTTPSRedirect: true\n' +
          `  rateLimit: { requests: 2, per: 1h, key: "header:X-Api-Key", maxKeys: ${MAX_KEYS} }\n`,
        { tls: true, files: { 'index.html': 'hello' } },
      );
      base = await baseline(portico, async () => {
        assert.deepEqual(await flood(portico.sport!, 200, -200), new Map([[200, 200]]));
      });
    });
    after(() => portico?.stop());

    it('keeps no more keys than the bound, serves others meanwhile, and recovers', async (t) => {
      // Without the header a client is counted by its address: 127.0.0.2 spends its two.
      assert.equal(await statusFrom(portico.port, '127.0.0.2'), 200);
      assert.equal(await statusFrom(portico.port, '127.0.0.2'), 200);
      assert.equal(await statusFrom(portico.port, '127.0.0.2'), 429);
      // Fewer new keys than the bound: its spent bucket is still remembered.
      assert.deepEqual(await flood(portico.sport!, MAX_KEYS / 2), new Map([[200, MAX_KEYS / 2]]));
      assert.equal(await statusFrom(portico.port, '127.0.0.2'), 429);
      let flooding = true;
      const attack = flood(portico.sport!, FLOOD, MAX_KEYS).finally(() => (flooding = false));
      // Another client is served while the flood goes on.
      assert.equal(await statusFrom(portico.port, '127.0.0.3'), 200);
      assert.ok(flooding, 'the flood was still under way');
      // Every made-up key is a bucket of its own: the flood passes whole.
      assert.deepEqual(await attack, new Map([[200, FLOOD]]));
      // Twenty times the bound in new keys: the limit kept the newest, and 127.0.0.2's spent
      // bucket, among the first, is forgotten.
      assert.equal(await statusFrom(portico.port, '127.0.0.2'), 200);
      // The newest are remembered: the flood's last key has one token left, then none.
      const last = await h2Statuses(portico.sport!, `made-up key ${MAX_KEYS + FLOOD - 1}`, 2);
      assert.deepEqual(last, [200, 429]);
      await assertRecovered(t, portico, base);
    });
  },
);
