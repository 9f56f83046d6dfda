// The shared store's token buckets, in one process (MemoryBuckets) and across processes
// (LmdbBuckets, each process with its own handle on one environment): the same answers, a bound
// on keys that holds, full buckets forgotten, and a closed space forgotten whole.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { LmdbBuckets } from '../../src/store/lmdb-buckets.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import type { BucketOptions, SharedBuckets } from '../../src/store/shared-store.js';

const dir = mkdtempSync(join(tmpdir(), 'portico-buckets-'));
let clock = 1_700_000_000_000;
const now = () => clock;
const fail = (line: string) => assert.fail(line);
const lmdb = new LmdbBuckets(dir, fail, now);
after(async () => {
  await lmdb.close();
  rmSync(dir, { recursive: true, force: true });
});

const options: BucketOptions = { intervalMs: 100, burst: 3, maxKeys: 4 };
let spaces = 0;
const stores: [string, (o: BucketOptions) => SharedBuckets][] = [
  ['in memory', (o) => new MemoryStore(now).buckets('s', o)],
  ['in LMDB', (o) => lmdb.buckets(`space ${++spaces}`, o)],
];

const SOURCE = new URL('../../src/store/lmdb-buckets.ts', import.meta.url).href;

/** What `count` takes of `key` in `space` answer in another process, at this process's clock. */
function takeElsewhere(space: string, key: string, count: number): number[] {
  // LMDB forbids one environment opened twice in a process: the other handle is another process's.
  const script =
    `const { LmdbBuckets } = await import(${JSON.stringify(SOURCE)});` +
    `const [dir, clock, space, key, count] = process.argv.slice(1);` +
    `const env = new LmdbBuckets(dir, (l) => { throw new Error(l); }, () => Number(clock));` +
    `const buckets = env.buckets(space, ${JSON.stringify(options)});` +
    `const out = Array.from({ length: Number(count) }, () => buckets.take(key).remaining);` +
    `await env.close(); process.stdout.write(JSON.stringify(out));`;
  const out = execFileSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      script,
      dir,
      String(clock),
      space,
      key,
      String(count),
    ],
    { encoding: 'utf8' },
  );
  return JSON.parse(out) as number[];
}

const allowed = (buckets: SharedBuckets, key: string, count: number) =>
  Array.from({ length: count }, () => buckets.take(key).allowed).filter(Boolean).length;

for (const [name, make] of stores) {
  describe(`token buckets ${name}`, () => {
    it('lets a burst through per key, then one request per interval', () => {
      const buckets = make(options);
      assert.equal(allowed(buckets, 'a', 10), 3);
      assert.equal(allowed(buckets, 'b', 10), 3, 'another key has its own bucket');
      const refused = buckets.take('a');
      assert.deepEqual(refused, { allowed: false, remaining: 0, retryAfterMs: 100 });
      clock += 250;
      assert.equal(allowed(buckets, 'a', 10), 2);
    });

    it('holds at most maxKeys, forgetting full buckets first', () => {
      const buckets = make(options);
      for (const key of ['k1', 'k2', 'k3', 'k4']) buckets.take(key);
      assert.equal(buckets.size, 4);
      // Past the bound: one is forgotten for each new key.
      for (const key of ['k5', 'k6']) buckets.take(key);
      assert.equal(buckets.size, 4);
      // Once every bucket is full again, new keys sweep the old ones away.
      clock += 1000;
      buckets.take('k7');
      assert.ok(buckets.size <= 3, `${buckets.size} keys`);
      buckets.take('k8');
      assert.ok(buckets.size <= 2, `${buckets.size} keys`);
    });

    it('never forgets the bucket it has just stored, even one full again at once', () => {
      // A nanosecond a token: every bucket is full again before the next take.
      const buckets = make({ intervalMs: 1e-6, burst: 1, maxKeys: 100 });
      for (const key of ['a', 'b', 'c', 'd']) buckets.take(key);
      assert.equal(buckets.size, 1);
    });

    it('forgets the whole space when closed', async () => {
      const buckets = make(options);
      allowed(buckets, 'a', 3);
      await buckets.close();
      assert.equal(buckets.size, 0);
      assert.equal(buckets.take('a').remaining, 2);
    });
  });
}

describe('token buckets in LMDB, across processes', () => {
  it('counts one bucket for the server: takes in another process draw on it', () => {
    const here = lmdb.buckets('shared', options);
    assert.equal(here.take('client').remaining, 2);
    assert.deepEqual(takeElsewhere('shared', 'client', 2), [1, 0]);
    assert.equal(here.take('client').allowed, false);
    assert.equal(here.size, 1);
    clock += 100;
    assert.deepEqual(takeElsewhere('shared', 'client', 1), [0]);
    assert.equal(here.take('client').allowed, false);
  });

  it('forgets a closed space’s many keys a chunk at a time, and keeps the others', async () => {
    const big = lmdb.buckets('big', { ...options, maxKeys: 10_000 });
    const kept = lmdb.buckets('kept', options);
    for (let i = 0; i < 2500; i++) big.take(`k${i}`);
    kept.take('k0');
    assert.equal(big.size, 2500);
    await big.close();
    assert.equal(big.size, 0);
    assert.equal(kept.size, 1);
    assert.equal(kept.take('k0').remaining, 1);
  });
});
