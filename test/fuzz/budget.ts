// How long a fuzz target runs, and one way to run a property within it. The run is bounded by
// time, not count, so CI's pass over the folder stays inside its minute whatever the machine:
// FUZZ_SECONDS per target (8 by default; `npm run fuzz` gives each 120), FUZZ_RUNS to stop
// sooner by count. A failure prints its seed and path; FUZZ_SEED and FUZZ_PATH replay that run.
// Within `npm test` (no FUZZ_SECONDS) the seed is fixed, so the suite gives the same verdict on every
// run; `npm run fuzz` draws a new seed each time to look further.
import type { TestContext } from 'node:test';
import fc from 'fast-check';

export const FUZZ_MS = Math.max(1, Number(process.env.FUZZ_SECONDS ?? 8)) * 1000;

const SUITE_SEED = '20261127';

/** One run of a property may take this long before it counts as a failure (a hang). */
const RUN_MS = 15_000;

/**
 * The node:test timeout for a test that fuzzes for `share` of the budget: the budget, plus room
 * for the server's start, shrinking a failure, and one run that outlives the limit.
 */
export function testTimeout(share = 1): number {
  return FUZZ_MS * share + 60_000;
}

/**
 * Runs `property` until `share` of the budget is spent (or FUZZ_RUNS runs), reports how many runs
 * it made, and fails with fast-check's report (counterexample, seed, path) if one run failed.
 */
export async function fuzz<T>(
  t: TestContext,
  property: fc.IAsyncProperty<T> | fc.IProperty<T>,
  share = 1,
): Promise<void> {
  const seed =
    process.env.FUZZ_SEED ?? (process.env.FUZZ_SECONDS === undefined ? SUITE_SEED : undefined);
  const path = process.env.FUZZ_PATH;
  const details = await fc.check(property as fc.IAsyncProperty<T>, {
    numRuns: Number(process.env.FUZZ_RUNS ?? Number.MAX_SAFE_INTEGER),
    plugins: [fc.interruptAfterTimeLimit(FUZZ_MS * share), fc.timeout(RUN_MS)],
    ...(seed !== undefined ? { seed: Number(seed) } : {}),
    ...(path !== undefined ? { path } : {}),
  });
  t.diagnostic(`${details.numRuns} runs, seed ${details.seed}`);
  if (details.failed)
    throw new Error(`${fc.defaultReportMessage(details)}\n${String(details.errorInstance)}`, {
      cause: details.errorInstance,
    });
}
