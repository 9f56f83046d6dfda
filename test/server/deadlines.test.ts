// The `timeout` sweep: a request whose head is late has its connection reset; one whose head is out
// leaves the sweep and holds nothing of it.
import assert from 'node:assert/strict';
import { it, mock, type TestContext } from 'node:test';
import { sending } from '../../src/http/response-head.js';
import { Deadlines } from '../../src/server/deadlines.js';
import { fakeCtx } from '../helpers/ctx.js';

function watched(): { ctx: ReturnType<typeof fakeCtx>['ctx']; destroyed: () => boolean } {
  const { ctx } = fakeCtx();
  let destroyed = false;
  Object.assign(ctx.req, { socket: { destroy: () => void (destroyed = true) } });
  return { ctx, destroyed: () => destroyed };
}

/** A sweep on mock timers from time 0, closed and the timers reset after the test. */
function frozenSweep(t: TestContext): Deadlines {
  mock.timers.enable({ apis: ['setInterval', 'Date'], now: 0 });
  t.after(() => mock.timers.reset());
  const deadlines = new Deadlines();
  t.after(() => deadlines.close());
  return deadlines;
}

it('resets a request whose head is late, and not one whose head is out', (t) => {
  const deadlines = frozenSweep(t);
  const late = watched();
  const answered = watched();
  deadlines.add(late.ctx, 400);
  deadlines.add(answered.ctx, 400);
  assert.notEqual(answered.ctx.deadline, undefined);
  sending(answered.ctx, 200);
  assert.equal(answered.ctx.deadline, undefined, 'the head is out: no longer watched');
  mock.timers.tick(300);
  assert.equal(late.destroyed(), false, 'before its deadline');
  mock.timers.tick(100);
  assert.equal(late.destroyed(), true, 'at its deadline');
  assert.equal(late.ctx.deadline, undefined);
  assert.equal(answered.destroyed(), false);
});

it('reuses a link a finished request left, watching the new request alone', (t) => {
  const deadlines = frozenSweep(t);
  const first = watched();
  deadlines.add(first.ctx, 400);
  const link = first.ctx.deadline;
  link!.end();
  const second = watched();
  deadlines.add(second.ctx, 400);
  assert.equal(second.ctx.deadline, link, 'the same link, reused');
  link!.end();
  link!.end();
  mock.timers.tick(400);
  assert.equal(first.destroyed(), false);
  assert.equal(second.destroyed(), false, 'ended before its deadline');
});
