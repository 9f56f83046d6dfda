// One collection once a surge has passed (many connections, or memory grown while idle), none for
// ordinary traffic.
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

/** How many collections a check per sample makes. */
function run(samples: readonly Sample[]): number {
  mock.timers.enable({ apis: ['setInterval'] });
  let i = 0;
  let collections = 0;
  const gc = new SurgeGc(
    {
      takePeak: () => samples[i]!.peak,
      open: () => samples[i]!.open,
      requests: () => samples[i]!.requests ?? i,
      rss: () => (samples[i]!.rssMb ?? 100) * MB,
    },
    () => collections++,
  );
  try {
    for (i = 0; i < samples.length; i++) mock.timers.tick(2_000);
  } finally {
    gc.stop();
    mock.timers.reset();
  }
  return collections;
}

it('collects once after ten thousand connections came and went', () => {
  assert.equal(
    run([
      { peak: 10_000, open: 9_000 },
      { peak: 10_000, open: 4_000 },
      { peak: 100, open: 20 },
      { peak: 30, open: 20 },
    ]),
    1,
  );
});

it('does not collect while the surge lasts, nor for a few hundred connections', () => {
  assert.equal(
    run([
      { peak: 10_000, open: 9_000 },
      { peak: 9_500, open: 5_000 },
    ]),
    0,
  );
  assert.equal(
    run([
      { peak: 900, open: 10 },
      { peak: 900, open: 10 },
    ]),
    0,
  );
});

it('collects once when memory grew and no request came in for a check, not under load', () => {
  // Under load (a new request count at each check) memory may grow: V8 collects as it goes.
  assert.equal(
    run([
      { peak: 10, open: 10, rssMb: 100 },
      { peak: 10, open: 10, rssMb: 150 },
      { peak: 10, open: 10, rssMb: 160 },
    ]),
    0,
  );
  // Idle after growing 40 MB: one collection, then the floor is measured again.
  assert.equal(
    run([
      { peak: 10, open: 10, requests: 1, rssMb: 100 },
      { peak: 10, open: 10, requests: 5, rssMb: 140 },
      { peak: 10, open: 10, requests: 5, rssMb: 140 },
      { peak: 10, open: 10, requests: 5, rssMb: 110 },
      { peak: 10, open: 10, requests: 5, rssMb: 112 },
    ]),
    1,
  );
});
