import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_RANGES, parseRange } from '../../src/static/ranges.js';

describe('parseRange', () => {
  it('reads the three single forms, clamping the end to the file (RFC 9110 §14.1.2)', () => {
    assert.deepEqual(parseRange('bytes=0-9', 100), {
      kind: 'ranges',
      ranges: [{ start: 0, end: 9 }],
    });
    assert.deepEqual(parseRange('bytes=90-', 100), {
      kind: 'ranges',
      ranges: [{ start: 90, end: 99 }],
    });
    assert.deepEqual(parseRange('bytes=-10', 100), {
      kind: 'ranges',
      ranges: [{ start: 90, end: 99 }],
    });
    assert.deepEqual(parseRange('bytes=50-999999', 100), {
      kind: 'ranges',
      ranges: [{ start: 50, end: 99 }],
    });
    assert.deepEqual(parseRange('bytes=-500', 100), {
      kind: 'ranges',
      ranges: [{ start: 0, end: 99 }],
    });
    assert.deepEqual(parseRange('bytes=99-99', 100), {
      kind: 'ranges',
      ranges: [{ start: 99, end: 99 }],
    });
  });

  it('accepts a case-insensitive unit, spaces and empty list members', () => {
    assert.deepEqual(parseRange('Bytes = 0-1 , , 5-6', 10), {
      kind: 'ranges',
      ranges: [
        { start: 0, end: 1 },
        { start: 5, end: 6 },
      ],
    });
  });

  it('is unsatisfiable when no range starts inside the file', () => {
    assert.deepEqual(parseRange('bytes=100-', 100), { kind: 'unsatisfiable' });
    assert.deepEqual(parseRange('bytes=100-200', 100), { kind: 'unsatisfiable' });
    assert.deepEqual(parseRange('bytes=-0', 100), { kind: 'unsatisfiable' });
    assert.deepEqual(parseRange('bytes=200-300,-0', 100), { kind: 'unsatisfiable' });
  });

  it('keeps the satisfiable ranges of a set and drops the others', () => {
    assert.deepEqual(parseRange('bytes=0-1,200-300', 100), {
      kind: 'ranges',
      ranges: [{ start: 0, end: 1 }],
    });
  });

  it('ignores what it may ignore: other units, bad syntax, an empty file', () => {
    for (const header of [
      'items=0-1',
      'bytes',
      'bytes=',
      'bytes=a-b',
      'bytes=5-1',
      'bytes=1-2-3',
      'bytes=--1',
      'bytes=0-1,x',
      'bytes=+1-2',
    ]) {
      assert.deepEqual(parseRange(header, 100), { kind: 'whole' }, header);
    }
    assert.deepEqual(parseRange('bytes=0-0', 0), { kind: 'whole' });
  });

  it('serves the whole file for abusive sets: overlapping or too many ranges', () => {
    assert.deepEqual(parseRange('bytes=0-10,5-20', 100), { kind: 'whole' });
    assert.deepEqual(parseRange('bytes=0-,0-', 100), { kind: 'whole' });
    assert.deepEqual(parseRange('bytes=50-60,-60', 100), { kind: 'whole' });
    const many = Array.from({ length: MAX_RANGES + 1 }, (_, i) => `${i * 2}-${i * 2}`).join(',');
    assert.deepEqual(parseRange(`bytes=${many}`, 1000), { kind: 'whole' });
    const allowed = Array.from({ length: MAX_RANGES }, (_, i) => `${i * 2}-${i * 2}`).join(',');
    const result = parseRange(`bytes=${allowed}`, 1000);
    assert.equal(result.kind === 'ranges' && result.ranges.length, MAX_RANGES);
  });

  it('keeps the order the client asked for, adjacent ranges included', () => {
    assert.deepEqual(parseRange('bytes=10-19,0-9', 100), {
      kind: 'ranges',
      ranges: [
        { start: 10, end: 19 },
        { start: 0, end: 9 },
      ],
    });
  });

  it('copes with numbers beyond 2^53', () => {
    assert.deepEqual(parseRange(`bytes=0-${'9'.repeat(30)}`, 100), {
      kind: 'ranges',
      ranges: [{ start: 0, end: 99 }],
    });
    assert.deepEqual(parseRange(`bytes=${'9'.repeat(30)}-`, 100), { kind: 'unsatisfiable' });
  });
});
