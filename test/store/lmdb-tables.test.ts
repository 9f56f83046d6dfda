// The tables worker processes share: bounded by entries and bytes once for every process, the
// oldest stored going first, and a write seen by a reader with its own handle from its next turn.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { LmdbTables } from '../../src/store/lmdb-tables.js';
import type { TableCodec } from '../../src/store/shared-store.js';

const dir = mkdtempSync(join(tmpdir(), 'portico-lmdb-'));
const tables = new LmdbTables(dir, (line) => assert.fail(line));
after(async () => {
  await tables.close();
  rmSync(dir, { recursive: true, force: true });
});

const plain: TableCodec<{ n: number }> = { encode: (v) => v, decode: (d) => d as { n: number } };

describe('LmdbTables', () => {
  it('evicts the oldest stored first when the byte bound is passed', () => {
    const t = tables.table('bytes', { maxEntries: undefined, maxBytes: 100 }, plain);
    for (let n = 1; n <= 4; n++) t.set(`k${n}`, { n }, 30);
    assert.deepEqual(t.stats(), { entries: 3, bytes: 90, evictions: 1 });
    assert.equal(t.get('k1'), undefined);
    assert.deepEqual(t.get('k4'), { n: 4 });
    // Replacing a key moves it to the newest place and counts its new size only.
    t.set('k2', { n: 22 }, 40);
    t.set('k5', { n: 5 }, 30);
    assert.equal(t.has('k3'), false);
    assert.deepEqual(t.get('k2'), { n: 22 });
    assert.deepEqual(t.stats(), { entries: 3, bytes: 100, evictions: 2 });
  });

  it('keeps at most maxEntries, and refuses a value larger than the byte bound', () => {
    const t = tables.table('entries', { maxEntries: 2, maxBytes: 1000 }, plain);
    for (let n = 1; n <= 3; n++) t.set(`k${n}`, { n }, 1);
    assert.deepEqual(t.stats(), { entries: 2, bytes: 2, evictions: 1 });
    assert.equal(t.has('k1'), false);
    // Too large: not stored, and what the key held before is gone too (as in memory).
    t.set('k3', { n: 33 }, 2000);
    assert.equal(t.get('k3'), undefined);
    assert.deepEqual(t.stats(), { entries: 1, bytes: 1, evictions: 1 });
    t.delete('k2');
    assert.deepEqual(t.stats(), { entries: 0, bytes: 0, evictions: 1 });
  });

  it('shows a write to a reader with its own handle from the reader’s next turn', async () => {
    const writer = tables.table('seen', { maxEntries: undefined, maxBytes: 1000 }, plain);
    const reader = new LmdbTables(dir, (line) => assert.fail(line)).table(
      'seen',
      { maxEntries: undefined, maxBytes: 1000 },
      plain,
    );
    // A reader keeps one snapshot for the rest of the turn it first read in (as a request does).
    const nextTurn = () => new Promise((resolve) => setTimeout(resolve, 0));
    assert.equal(reader.get('k'), undefined);
    writer.set('k', { n: 1 }, 1);
    await nextTurn();
    assert.deepEqual(reader.get('k'), { n: 1 });
    writer.delete('k');
    await nextTurn();
    assert.equal(reader.has('k'), false);
  });
});
