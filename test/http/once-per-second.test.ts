// The per-second timestamp cache behind the HTTP/2 Date field and the access log's time.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { oncePerSecond } from '../../src/http/once-per-second.js';

it('formats each whole second once and a new second at once', () => {
  const seconds: number[] = [];
  const format = oncePerSecond((second) => {
    seconds.push(second);
    return `s${second}`;
  });
  assert.equal(format(1_700_000_000_000), 's1700000000');
  assert.equal(format(1_700_000_000_999), 's1700000000');
  assert.equal(format(1_700_000_001_000), 's1700000001');
  // A clock stepped back is a new second too, not the cached one.
  assert.equal(format(1_699_999_999_500), 's1699999999');
  assert.deepEqual(seconds, [1_700_000_000, 1_700_000_001, 1_699_999_999]);
});
