import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  BruteForceGuard,
  clientKey,
  LOCKOUT_FAILURES,
  LOCKOUT_WINDOW_MS,
} from '../../src/auth/brute-force.js';
import { until } from '../helpers/wait.js';

function fakeClock(): { now: () => number; advance(ms: number): void } {
  let t = 1_000_000;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

test('10 failures lock a client out; other clients are not affected', () => {
  const guard = new BruteForceGuard({ now: fakeClock().now });
  for (let i = 1; i < LOCKOUT_FAILURES; i++) {
    guard.recordFailure('192.0.2.1');
    assert.equal(guard.isLockedOut('192.0.2.1'), false, `after ${i}`);
  }
  guard.recordFailure('192.0.2.1');
  assert.equal(guard.isLockedOut('192.0.2.1'), true);
  assert.equal(guard.isLockedOut('192.0.2.2'), false);
});

test('the record expires 300 s after the last failure (sliding), ending the lock-out', () => {
  const clock = fakeClock();
  const guard = new BruteForceGuard({ now: clock.now });
  for (let i = 0; i < 5; i++) guard.recordFailure('192.0.2.1');
  clock.advance(LOCKOUT_WINDOW_MS - 1000);
  // A failure inside the window keeps counting and restarts it.
  for (let i = 0; i < 5; i++) guard.recordFailure('192.0.2.1');
  assert.equal(guard.isLockedOut('192.0.2.1'), true);
  clock.advance(LOCKOUT_WINDOW_MS - 1000);
  assert.equal(guard.isLockedOut('192.0.2.1'), true, 'still inside the window of the last failure');
  clock.advance(2000);
  assert.equal(guard.isLockedOut('192.0.2.1'), false);
  guard.recordFailure('192.0.2.1');
  assert.equal(guard.isLockedOut('192.0.2.1'), false, 'a new record starts from one');
});

test('checking a locked-out client does not extend its lock-out', () => {
  const clock = fakeClock();
  const guard = new BruteForceGuard({ now: clock.now, windowMs: 1000 });
  for (let i = 0; i < LOCKOUT_FAILURES; i++) guard.recordFailure('192.0.2.1');
  for (let i = 0; i < 9; i++) {
    clock.advance(100);
    assert.equal(guard.isLockedOut('192.0.2.1'), true);
  }
  clock.advance(101);
  assert.equal(guard.isLockedOut('192.0.2.1'), false);
});

test('bounded: the least recently failing clients are dropped beyond maxClients', () => {
  const guard = new BruteForceGuard({ now: fakeClock().now, maxClients: 100 });
  for (let i = 0; i < LOCKOUT_FAILURES; i++) guard.recordFailure('198.51.100.1');
  for (let i = 0; i < 1000; i++) guard.recordFailure(`10.0.${i >> 8}.${i & 255}`);
  assert.equal(guard.size, 100);
  assert.equal(guard.isLockedOut('198.51.100.1'), false, 'the oldest record was dropped');
});

test('purge frees expired records without reading them', () => {
  const clock = fakeClock();
  const guard = new BruteForceGuard({ now: clock.now, windowMs: 1000 });
  for (let i = 0; i < 500; i++) guard.recordFailure(`10.1.${i >> 8}.${i & 255}`);
  clock.advance(500);
  guard.recordFailure('10.9.9.9');
  clock.advance(600);
  guard.purge();
  assert.equal(guard.size, 1);
});

test('IPv6 clients are counted per /64; IPv4-mapped addresses as IPv4', () => {
  assert.equal(clientKey('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
  assert.equal(clientKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff'), '2001:db8:1:2::/64');
  assert.equal(clientKey('::1'), '0:0:0:0::/64');
  assert.equal(clientKey('::ffff:192.0.2.1'), '192.0.2.1');
  assert.equal(clientKey('192.0.2.1'), '192.0.2.1');
  const guard = new BruteForceGuard({ now: fakeClock().now });
  for (let i = 0; i < LOCKOUT_FAILURES; i++) guard.recordFailure(`2001:db8:1:2::${i.toString(16)}`);
  assert.equal(guard.isLockedOut('2001:db8:1:2:dead:beef::1'), true);
  assert.equal(guard.isLockedOut('2001:db8:1:3::1'), false);
});

test("serialize runs one client's attempts one at a time, other clients in parallel", async () => {
  const guard = new BruteForceGuard();
  const log: string[] = [];
  // Each attempt runs until the test lets it end.
  const ends = new Map<string, () => void>();
  const attempt = (id: string) => async () => {
    log.push(`start ${id}`);
    await new Promise<void>((resolve) => ends.set(id, resolve));
    log.push(`end ${id}`);
    if (id === 'a2') throw new Error('refused');
    return id;
  };
  const end = async (id: string) => {
    await until(() => ends.get(id), { what: `${id} started` });
    ends.get(id)!();
  };
  const settled = Promise.allSettled([
    guard.serialize('192.0.2.1', attempt('a1')),
    guard.serialize('192.0.2.1', attempt('a2')),
    guard.serialize('192.0.2.1', attempt('a3')),
    guard.serialize('192.0.2.2', attempt('b1')),
  ]);
  await end('b1');
  for (const id of ['a1', 'a2', 'a3']) await end(id);
  const results = await settled;
  assert.deepEqual(
    results.map((r) => r.status),
    ['fulfilled', 'rejected', 'fulfilled', 'fulfilled'],
  );
  assert.deepEqual(log, [
    'start a1',
    'start b1',
    'end b1',
    'end a1',
    'start a2',
    'end a2',
    'start a3',
    'end a3',
  ]);
  // The queue is forgotten once empty.
  await new Promise((r) => setImmediate(r));
  assert.equal((guard as unknown as { queues: Map<string, unknown> }).queues.size, 0);
});
