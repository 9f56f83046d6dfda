// The in-memory cache: fresh entries cost no filesystem call, stale ones are checked again, and
// changes on disk (content, deletion, swapped symlinks, a swapped wwwroot) are noticed.
import assert from 'node:assert/strict';
import {
  mkdirSync,
  promises as fsp,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { after, afterEach, beforeEach, describe, it, mock, type TestContext } from 'node:test';
import { StaticFiles } from '../../src/static/static-files.js';
import { request } from '../helpers/http.js';
import { startRig, tempDir, type Rig } from './harness.js';

const REVALIDATE_MS = 300;
const { dir: base, remove } = tempDir('cache');
after(remove);

let root: string;
let caseNumber = 0;
function freshRoot(): string {
  root = join(base, `case-${++caseNumber}`);
  mkdirSync(root);
  return root;
}

/** Counts the filesystem calls the static module makes while `run` runs. */
async function countCalls(run: () => Promise<void>): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  const mocks = (['realpath', 'stat', 'lstat', 'open', 'readdir'] as const).map((name) => {
    counts[name] = 0;
    const original = fsp[name] as (...args: unknown[]) => unknown;
    return mock.method(fsp, name, (...args: unknown[]) => {
      counts[name]!++;
      return original.apply(fsp, args);
    });
  });
  try {
    await run();
  } finally {
    for (const m of mocks) m.mock.restore();
  }
  return counts;
}

/**
 * The cache's clock, frozen at the real time (so entries made before stay comparable) until
 * `expire` moves it past the revalidation interval: no wait, and no test that a slow machine makes
 * miss the window in which an entry is still fresh.
 */
function frozenClock(t: TestContext): { expire: () => void } {
  t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
  return { expire: () => t.mock.timers.tick(REVALIDATE_MS) };
}

const total = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

describe('the file cache', () => {
  let rig: Rig;
  beforeEach(async () => {
    freshRoot();
    writeFileSync(join(root, 'a.txt'), 'version one');
    mkdirSync(join(root, 'site'));
    writeFileSync(join(root, 'site', 'index.html'), 'home');
    // `never`: a link swapped to point outside is then refused whoever owns these files.
    rig = await startRig(
      { wwwroot: root },
      { revalidateMs: REVALIDATE_MS, followSymlinks: 'never' },
    );
  });
  afterEach(async () => {
    await rig.close();
    assert.deepEqual(rig.unexpected, []);
  });

  it('sends a cached small file byte for byte, every byte value, again and again', async () => {
    // Held as the text its HTTP/1.1 responses are written with: latin1, one character a byte.
    const bytes = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7) % 256));
    writeFileSync(join(root, 'all-bytes.bin'), bytes);
    for (let i = 0; i < 3; i++) {
      const reply = await request(rig, '/all-bytes.bin');
      assert.equal(reply.headers['content-length'], '4096');
      assert.ok(reply.body.equals(bytes), `response ${i} differs`);
    }
  });

  it('makes no filesystem call for a fresh cached file, index or 404', async () => {
    const slow = await startRig({ wwwroot: root }, { revalidateMs: 60_000 });
    try {
      for (const path of ['/a.txt', '/site/', '/missing.txt']) await request(slow, path);
      await request(slow, '/a.txt', { headers: { 'accept-encoding': 'gzip' } });
      const counts = await countCalls(async () => {
        for (let i = 0; i < 50; i++) {
          assert.equal((await request(slow, '/a.txt')).body.toString(), 'version one');
          assert.equal((await request(slow, '/a.txt', { method: 'HEAD' })).status, 200);
          assert.equal((await request(slow, '/site/')).body.toString(), 'home');
          assert.equal((await request(slow, '/missing.txt')).status, 404);
          assert.equal(
            (await request(slow, '/a.txt', { headers: { range: 'bytes=0-2' } })).status,
            206,
          );
        }
      });
      assert.equal(total(counts), 0, JSON.stringify(counts));
    } finally {
      await slow.close();
    }
  });

  it('serves new content once the entry is revalidated', async (t) => {
    const clock = frozenClock(t);
    const first = await request(rig, '/a.txt');
    assert.equal(first.body.toString(), 'version one');
    writeFileSync(join(root, 'a.txt'), 'version two, longer');
    assert.equal(
      (await request(rig, '/a.txt')).body.toString(),
      'version one',
      'still fresh: memory answers',
    );
    clock.expire();
    const second = await request(rig, '/a.txt');
    assert.equal(second.body.toString(), 'version two, longer');
    assert.notEqual(second.headers.etag, first.headers.etag);
  });

  it('notices a same-size rewrite (mtime and inode change)', async (t) => {
    const clock = frozenClock(t);
    await request(rig, '/a.txt');
    writeFileSync(join(root, 'a.tmp'), 'version ONE');
    // A modification time of its own, whatever the filesystem's resolution.
    utimesSync(join(root, 'a.tmp'), 1_000_000, 1_000_000);
    renameSync(join(root, 'a.tmp'), join(root, 'a.txt'));
    clock.expire();
    assert.equal((await request(rig, '/a.txt')).body.toString(), 'version ONE');
  });

  it('answers 404 after deletion, and serves a file created after a 404', async (t) => {
    const clock = frozenClock(t);
    await request(rig, '/a.txt');
    unlinkSync(join(root, 'a.txt'));
    clock.expire();
    assert.equal((await request(rig, '/a.txt')).status, 404);
    writeFileSync(join(root, 'a.txt'), 'back');
    assert.equal((await request(rig, '/a.txt')).status, 404, 'the 404 is cached too');
    clock.expire();
    assert.equal((await request(rig, '/a.txt')).body.toString(), 'back');
  });

  it('notices a symlink swapped to another file, and one swapped to point outside', async (t) => {
    const clock = frozenClock(t);
    writeFileSync(join(root, 'b.txt'), 'bee');
    mkdirSync(join(base, `outside-${caseNumber}`));
    writeFileSync(join(base, `outside-${caseNumber}`, 'secret.txt'), 'secret');
    symlinkSync('a.txt', join(root, 'link.txt'));
    assert.equal((await request(rig, '/link.txt')).body.toString(), 'version one');
    unlinkSync(join(root, 'link.txt'));
    symlinkSync('b.txt', join(root, 'link.txt'));
    clock.expire();
    assert.equal((await request(rig, '/link.txt')).body.toString(), 'bee');
    unlinkSync(join(root, 'link.txt'));
    symlinkSync(join(base, `outside-${caseNumber}`, 'secret.txt'), join(root, 'link.txt'));
    clock.expire();
    assert.equal((await request(rig, '/link.txt')).status, 404);
  });

  it('notices a wwwroot symlink swapped to a new release', async (t) => {
    const clock = frozenClock(t);
    const releases = join(base, `releases-${caseNumber}`);
    mkdirSync(join(releases, 'v1'), { recursive: true });
    mkdirSync(join(releases, 'v2'));
    writeFileSync(join(releases, 'v1', 'app.js'), 'one');
    writeFileSync(join(releases, 'v2', 'app.js'), 'two');
    symlinkSync(join(releases, 'v1'), join(releases, 'current'));
    const site = await startRig(
      { wwwroot: join(releases, 'current') },
      { revalidateMs: REVALIDATE_MS },
    );
    try {
      assert.equal((await request(site, '/app.js')).body.toString(), 'one');
      symlinkSync(join(releases, 'v2'), join(releases, 'next'));
      renameSync(join(releases, 'next'), join(releases, 'current'));
      clock.expire();
      assert.equal((await request(site, '/app.js')).body.toString(), 'two');
    } finally {
      await site.close();
    }
  });

  it('checks the disk once for a burst of requests to a new path', async () => {
    writeFileSync(join(root, 'burst.txt'), 'burst');
    const counts = await countCalls(async () => {
      const replies = await Promise.all(
        Array.from({ length: 30 }, () => request(rig, '/burst.txt')),
      );
      assert.ok(replies.every((r) => r.body.toString() === 'burst'));
    });
    assert.ok(counts.realpath! <= 2, `realpath ${counts.realpath} (file, maybe root)`);
    assert.equal(counts.open, 1);
  });

  it('reads large files from disk on every request, small ones once', async () => {
    writeFileSync(join(root, 'large.txt'), 'L'.repeat(2000));
    const small = await startRig(
      { wwwroot: root },
      { revalidateMs: 60_000, maxCachedFileSize: 1000 },
    );
    try {
      await request(small, '/a.txt');
      await request(small, '/large.txt');
      const counts = await countCalls(async () => {
        for (let i = 0; i < 3; i++) {
          assert.equal((await request(small, '/a.txt')).body.toString(), 'version one');
          assert.equal((await request(small, '/large.txt')).body.length, 2000);
        }
      });
      assert.equal(counts.open, 3);
      assert.equal(counts.realpath, 0);
    } finally {
      await small.close();
    }
  });

  it('stays within its entry bound, evicting the least recently used', async () => {
    for (const name of ['x', 'y', 'z']) writeFileSync(join(root, name), name);
    const tight = await startRig({ wwwroot: root }, { revalidateMs: 60_000, maxEntries: 2 });
    try {
      await request(tight, '/x');
      await request(tight, '/y');
      const warm = await countCalls(async () => void (await request(tight, '/y')));
      assert.equal(total(warm), 0);
      await request(tight, '/z'); // evicts /x
      const cold = await countCalls(async () =>
        assert.equal((await request(tight, '/x')).body.toString(), 'x'),
      );
      assert.equal(cold.realpath, 1);
    } finally {
      await tight.close();
    }
  });

  it('stays within its byte bound and still serves everything', async () => {
    for (let i = 0; i < 20; i++) writeFileSync(join(root, `f${i}.txt`), String(i).repeat(1000));
    const tight = await startRig({ wwwroot: root }, { revalidateMs: 60_000, maxCacheBytes: 5000 });
    try {
      for (let round = 0; round < 2; round++) {
        for (let i = 0; i < 20; i++)
          assert.equal(
            (await request(tight, `/f${i}.txt`)).body.toString(),
            String(i).repeat(1000),
          );
      }
    } finally {
      await tight.close();
    }
  });

  it('forgets everything on close()', async () => {
    const files = new StaticFiles({ revalidateMs: 60_000 });
    const site = await startRig({ wwwroot: root }, {}, files);
    try {
      assert.equal((await request(site, '/a.txt')).body.toString(), 'version one');
      writeFileSync(join(root, 'a.txt'), 'after close');
      files.close();
      assert.equal((await request(site, '/a.txt')).body.toString(), 'after close');
    } finally {
      await site.close();
    }
  });

  it('tells kind() about changes after revalidation', async (t) => {
    const clock = frozenClock(t);
    const files = new StaticFiles({ revalidateMs: REVALIDATE_MS });
    assert.equal(await files.kind(root, '/site'), 'directory');
    rmSync(join(root, 'site'), { recursive: true });
    writeFileSync(join(root, 'site'), 'now a file');
    assert.equal(await files.kind(root, '/site'), 'directory', 'cached');
    clock.expire();
    assert.equal(await files.kind(root, '/site'), 'file');
    files.close();
  });
});
