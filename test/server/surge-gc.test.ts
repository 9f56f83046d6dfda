// Memory given back once a surge has passed (many connections, or memory grown while idle): one
// collection at once, a second with the allocator's trim four checks later; nothing for ordinary
// traffic.
import assert from 'node:assert/strict';
import { it, mock } from 'node:test';
import { SurgeGc } from '../../src/server/surge-gc.js';

const MB = 1024 * 1024;

interface Sample {
  readonly peak: number;
  readonly open: number;
  readonly requests?: number;
  readonly rssMb?: number;
}

/** What each check did, one letter per action: "c" a collection, "t" the allocator's trim. */
function run(samples: readonly Sample[]): string[] {
  mock.timers.enable({ apis: ['setInterval'] });
  let i = 0;
  const done = samples.map(() => '');
  const gc = new SurgeGc(
    {
      takePeak: () => samples[i]!.peak,
      open: () => samples[i]!.open,
      requests: () => samples[i]!.requests ?? i,
      rss: () => (samples[i]!.rssMb ?? 100) * MB,
    },
    { collect: () => (done[i] += 'c'), trim: () => (done[i] += 't') },
  );
  try {
    for (i = 0; i < samples.length; i++) mock.timers.tick(2_000);
  } finally {
    gc.stop();
    mock.timers.reset();
  }
  return done;
}

const quiet = (n: number): Sample[] => Array.from({ length: n }, () => ({ peak: 30, open: 20 }));

it('collects once after ten thousand connections came and went, then settles and trims', () => {
  assert.deepEqual(
    run([
      { peak: 10_000, open: 9_000 },
      { peak: 10_000, open: 4_000 },
      { peak: 100, open: 20 },
      ...quiet(5),
    ]),
    ['', '', 'c', '', '', '', 'ct', ''],
  );
});

it('does not collect while the surge lasts, nor for a few hundred connections', () => {
  assert.deepEqual(
    run([
      { peak: 10_000, open: 9_000 },
      { peak: 9_500, open: 5_000 },
    ]),
    ['', ''],
  );
  assert.deepEqual(
    run([
      { peak: 900, open: 10 },
      { peak: 900, open: 10 },
    ]),
    ['', ''],
  );
});

it('a second surge before the first settled collects again and settles once', () => {
  assert.deepEqual(
    run([
      { peak: 10_000, open: 100 },
      { peak: 10_000, open: 9_000 },
      { peak: 10_000, open: 100 },
      ...quiet(5),
    ]),
    ['c', '', 'c', '', '', '', 'ct', ''],
  );
});

it('collects once when memory grew and no request came in for a check, not under load', () => {
  // Under load (a new request count at each check) memory may grow: V8 collects as it goes.
  assert.deepEqual(
    run([
      { peak: 10, open: 10, rssMb: 100 },
      { peak: 10, open: 10, rssMb: 150 },
      { peak: 10, open: 10, rssMb: 160 },
    ]),
    ['', '', ''],
  );
  // Idle after growing 40 MB: one collection, then the floor is measured again.
  const idle = (rssMb: number): Sample => ({ peak: 10, open: 10, requests: 5, rssMb });
  assert.deepEqual(
    run([
      { peak: 10, open: 10, requests: 1, rssMb: 100 },
      idle(140),
      idle(140),
      idle(110),
      idle(112),
      idle(112),
      idle(100),
      idle(100),
    ]),
    ['', '', 'c', '', '', '', 'ct', ''],
  );
});

it('collects again once the clients that held memory through a collection have left', () => {
  // Four connections hold 500 stalled streams: memory grew on an idle server, a collection could
  // not free what they hold; once they are gone, what they held is collected and trimmed.
  const held = (rssMb: number, open: number): Sample => ({ peak: 4, open, requests: 5, rssMb });
  assert.deepEqual(
    run([
      { peak: 4, open: 4, requests: 1, rssMb: 120 },
      held(148, 4),
      held(148, 4),
      held(147, 4),
      held(147, 0),
      held(147, 0),
      held(147, 0),
      held(147, 0),
      held(120, 0),
      held(120, 0),
    ]),
    ['', '', 'c', '', 'c', '', '', '', 'ct', ''],
  );
});
