// When dead workers are started again, and how often the error log says so.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { CauseLog, RestartBackoff } from '../../src/workers/restart-backoff.js';

it('doubles the wait while workers die young, and starts at once after one that lived', () => {
  const backoff = new RestartBackoff();
  assert.deepEqual(
    [1, 2, 3, 4].map(() => backoff.next(50)),
    [100, 200, 400, 800],
  );
  assert.equal(backoff.next(60_000), 0);
  assert.equal(backoff.next(50), 100);
  for (let i = 0; i < 20; i++) backoff.next(50);
  assert.equal(backoff.next(50), 30_000);
});

it('says a cause once, then at most once a minute with how often it came back', () => {
  const lines: string[] = [];
  let now = 0;
  const log = new CauseLog(
    (line) => lines.push(line),
    () => now,
  );
  log.report('killed', 'worker 1 was killed');
  log.report('killed', 'worker 2 was killed');
  log.report('exit 1', 'worker 3 exited with status 1');
  now = 61_000;
  log.report('killed', 'worker 4 was killed');
  assert.deepEqual(lines, [
    'worker 1 was killed',
    'worker 3 exited with status 1',
    'worker 4 was killed (2 times since the last such line)',
  ]);
});

it('remembers at most a hundred causes, forgetting the oldest', () => {
  const lines: string[] = [];
  const log = new CauseLog(
    (line) => lines.push(line),
    () => 0,
  );
  for (let i = 0; i <= 100; i++) log.report(`cause ${i}`, `line ${i}`);
  log.report('cause 0', 'line 0 again');
  log.report('cause 100', 'line 100 again');
  assert.equal(lines.length, 102);
  assert.equal(lines.at(-1), 'line 0 again');
});
