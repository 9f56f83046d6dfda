// One collection once a surge of connections has passed, none for ordinary traffic.
import assert from 'node:assert/strict';
import { it, mock } from 'node:test';
import { SurgeGc } from '../../src/server/surge-gc.js';

function run(samples: readonly (readonly [peak: number, open: number])[]): number {
  mock.timers.enable({ apis: ['setInterval'] });
  let i = 0;
  let collections = 0;
  const gc = new SurgeGc(
    () => samples[i]![0],
    () => samples[i]![1],
    () => collections++,
  );
  try {
    for (i = 0; i < samples.length; i++) mock.timers.tick(5_000);
  } finally {
    gc.stop();
    mock.timers.reset();
  }
  return collections;
}

it('collects once after ten thousand connections came and went', () => {
  assert.equal(
    run([
      [10_000, 9_000],
      [10_000, 4_000],
      [100, 20],
      [30, 20],
    ]),
    1,
  );
});

it('does not collect while the surge lasts, nor for a few hundred connections', () => {
  assert.equal(
    run([
      [10_000, 9_000],
      [9_500, 5_000],
    ]),
    0,
  );
  assert.equal(
    run([
      [900, 10],
      [900, 10],
    ]),
    0,
  );
});
