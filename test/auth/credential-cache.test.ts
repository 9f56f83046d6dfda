import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CredentialCache } from '../../src/auth/credential-cache.js';
import { hashPassword } from '../../src/auth/password.js';

// A stand-in KDF: "hash:<password>" verifies <password>; every call is counted.
function counting(): {
  calls: number;
  verify: (phc: string, password: string) => Promise<boolean>;
} {
  const state = {
    calls: 0,
    verify: async (phc: string, password: string) => {
      state.calls++;
      return phc === `hash:${password}`;
    },
  };
  return state;
}

function fakeClock(): { now: () => number; advance(ms: number): void } {
  let t = 5_000;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

test('a success is remembered; the next check of the same credentials runs no KDF', async () => {
  const kdf = counting();
  const cache = new CredentialCache({ verify: kdf.verify });
  assert.equal(cache.has('alice', 'right', 'hash:right'), false);
  assert.equal(await cache.verify('alice', 'right', 'hash:right'), true);
  assert.equal(cache.has('alice', 'right', 'hash:right'), true);
  assert.equal(await cache.verify('alice', 'right', 'hash:right'), true);
  assert.equal(kdf.calls, 1);
});

test('a wrong password is never remembered: every attempt runs the full KDF', async () => {
  const kdf = counting();
  const cache = new CredentialCache({ verify: kdf.verify });
  await cache.verify('alice', 'right', 'hash:right');
  for (let i = 0; i < 3; i++)
    assert.equal(await cache.verify('alice', 'wrong', 'hash:right'), false);
  assert.equal(cache.has('alice', 'wrong', 'hash:right'), false);
  assert.equal(kdf.calls, 4);
  assert.equal(cache.size, 1);
});

test('the key covers user, password and hash, unambiguously', async () => {
  const kdf = counting();
  const cache = new CredentialCache({
    verify: async (phc, password) => (await kdf.verify(phc, password)) || phc === 'any',
  });
  await cache.verify('a\0b', 'c', 'any');
  assert.equal(cache.has('a', 'b\0c', 'any'), false);
  assert.equal(cache.has('a\0b', 'c', 'other'), false, 'a changed hash (a reload) is a new key');
  assert.equal(cache.has('A\0b', 'c', 'any'), false);
});

test('entries expire after the time to live, counted from the check', async () => {
  const clock = fakeClock();
  const kdf = counting();
  const cache = new CredentialCache({ verify: kdf.verify, ttlMs: 1000, now: clock.now });
  await cache.verify('alice', 'right', 'hash:right');
  clock.advance(600);
  assert.equal(cache.has('alice', 'right', 'hash:right'), true);
  clock.advance(600);
  assert.equal(cache.has('alice', 'right', 'hash:right'), false, 'reading does not extend it');
  await cache.verify('alice', 'right', 'hash:right');
  assert.equal(kdf.calls, 2);
  clock.advance(2000);
  cache.purge();
  assert.equal(cache.size, 0);
});

test('bounded: beyond maxEntries the least recently used go', async () => {
  const kdf = counting();
  const cache = new CredentialCache({ verify: kdf.verify, maxEntries: 10 });
  for (let i = 0; i < 50; i++) await cache.verify(`user${i}`, 'pw', 'hash:pw');
  assert.equal(cache.size, 10);
  assert.equal(cache.has('user0', 'pw', 'hash:pw'), false);
  assert.equal(cache.has('user49', 'pw', 'hash:pw'), true);
});

test('the real KDF by default', async () => {
  const phc = await hashPassword('correct horse');
  const cache = new CredentialCache();
  assert.equal(await cache.verify('alice', 'battery staple', phc), false);
  assert.equal(await cache.verify('alice', 'correct horse', phc), true);
  assert.equal(cache.has('alice', 'correct horse', phc), true);
});
