// The token-bucket arithmetic: a full bucket lets `burst` through at once, then one request per
// interval; a refusal says how long until the next token, and a clock set back owes no more than
// a bucket holds.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { takeToken } from '../../src/store/token-bucket.js';

const rate = { intervalMs: 100, burst: 5 };

/** `count` takes at `now`, from the bucket full at `fullAt`: what each answered, and the last state. */
function takes(count: number, now: number, fullAt?: number) {
  const answers = [];
  for (let i = 0; i < count; i++) {
    const take = takeToken(fullAt, now, rate);
    if (take.taken.allowed) fullAt = take.fullAt;
    answers.push(take.taken);
  }
  return { answers, fullAt };
}

describe('takeToken', () => {
  it('lets a burst through, counting down, then refuses until a token comes back', () => {
    const now = 1_700_000_000_000;
    const { answers, fullAt } = takes(6, now);
    assert.deepEqual(
      answers.map((a) => [a.allowed, a.remaining]),
      [
        [true, 4],
        [true, 3],
        [true, 2],
        [true, 1],
        [true, 0],
        [false, 0],
      ],
    );
    // The last allowed one says when the next token comes; the refusal says the same.
    assert.equal(answers[4]!.retryAfterMs, 100);
    assert.equal(answers[5]!.retryAfterMs, 100);
    assert.equal(fullAt, now + 500);
    // 99 ms later nothing has come back; at 100 ms one has, and only one.
    assert.equal(takeToken(fullAt, now + 99, rate).taken.retryAfterMs, 1);
    assert.deepEqual(
      takes(2, now + 100, fullAt).answers.map((a) => a.allowed),
      [true, false],
    );
    // Once full again, the bucket is as if it had never been used.
    assert.deepEqual(takeToken(fullAt, now + 500, rate), takeToken(undefined, now + 500, rate));
  });

  it('keeps a steady rate over fractional intervals (3 per second)', () => {
    const third = { intervalMs: 1000 / 3, burst: 1 };
    let fullAt: number | undefined;
    let allowed = 0;
    const start = 1_700_000_000_123;
    for (let ms = 0; ms < 3000; ms++) {
      const take = takeToken(fullAt, start + ms, third);
      if (!take.taken.allowed) continue;
      allowed++;
      fullAt = take.fullAt;
    }
    assert.equal(allowed, 9);
  });

  it('owes no more than a bucket holds when the clock is set back', () => {
    const now = 1_700_000_000_000;
    const { fullAt } = takes(5, now);
    // An hour earlier: the bucket is empty, not an hour in debt.
    const refused = takeToken(fullAt, now - 3_600_000, rate).taken;
    assert.equal(refused.allowed, false);
    assert.equal(refused.retryAfterMs, 100);
  });
});
