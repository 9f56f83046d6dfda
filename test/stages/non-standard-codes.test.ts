// Basic authentication in the nonStandardCodes stage, driven with a stand-in request: what needs
// timing or concurrency control that a server round trip would blur. (IP lists and replacement
// templates are shared with the blocklist and rewriteMap and tested with them.)
import assert from 'node:assert/strict';
import { pbkdf2Sync, randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { createAuthServices, type AuthServices } from '../../src/auth/auth-services.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { hashPassword } from '../../src/auth/password.js';
import { withDefaults } from '../../src/config/defaults.js';
import type { Ctx } from '../../src/http/ctx.js';
import { HttpError } from '../../src/http/http-error.js';
import type { Stage } from '../../src/http/stage.js';
import { nonStandardCodes } from '../../src/stages/non-standard-codes.js';
import { cpuClock } from '../helpers/cpu.js';
import { fakeCtx } from '../helpers/ctx.js';

// PBKDF2 hashes in password-auth's PHC form (the KDF takes the B64-decoded salt).
function pbkdf2Phc(password: string, iterations: number): string {
  const salt = randomBytes(16);
  const b64 = (b: Buffer) => b.toString('base64').replace(/=+$/, '');
  return `$pbkdf2-sha256$i=${iterations},l=32$${b64(salt)}$${b64(pbkdf2Sync(password, salt, iterations, 32, 'sha256'))}`;
}

function fakeCtxFor(authorization?: string, clientAddress = '192.0.2.1'): Ctx {
  return fakeCtx({
    path: '/private',
    clientAddress,
    headers: authorization ? { authorization } : {},
  }).ctx;
}

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('nonStandardCodes basic authentication', () => {
  const logged: string[] = [];
  const services: AuthServices = createAuthServices(
    { log: (m) => logged.push(m) },
    {},
    new MemoryStore(),
  );
  after(() => services.close());
  const protect = (pass: string) =>
    nonStandardCodes(
      withDefaults({
        users: [{ name: 'alice', pass }],
        nonStandardCodes: [{ scode: 401, url: '/private' }],
      }),
      services,
    )!;
  const stage = protect(pbkdf2Phc('right', 100_000));

  async function run(ctx: Ctx, through: Stage = stage): Promise<number> {
    try {
      await through(ctx, () => undefined);
      return 200;
    } catch (e) {
      assert.ok(e instanceof HttpError, String(e));
      return e.status;
    }
  }

  /** The status, and the CPU time the request cost (what a KDF costs, however busy the machine). */
  async function timed(ctx: Ctx, through: Stage): Promise<[number, number]> {
    const cpu = cpuClock();
    const status = await run(ctx, through);
    return [status, cpu()];
  }

  it('is absent when there are no entries', () => {
    assert.equal(nonStandardCodes(withDefaults({ nonStandardCodes: [] }), services), undefined);
    assert.equal(nonStandardCodes(withDefaults({}), services), undefined);
  });

  // One slow outlier (a page-faulted Argon2 arena, a busy thread pool) must not decide the verdict:
  // each figure is the median of interleaved trials after a warm-up, each trial from a new address.
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1]!;
  let address = 0;
  const from = () => `198.51.100.${++address}`;

  it('an unknown user name costs a full KDF of the same kind as a wrong password (PBKDF2, Argon2id)', async () => {
    for (const [kind, through] of [
      ['pbkdf2', stage],
      ['argon2id', protect(await hashPassword('right'))],
    ] as const) {
      await run(fakeCtxFor(basic('alice', 'wrong'), from()), through);
      const wrong: number[] = [];
      const unknown: number[] = [];
      for (let trial = 0; trial < 5; trial++) {
        const [wrongStatus, w] = await timed(fakeCtxFor(basic('alice', 'wrong'), from()), through);
        const [unknownStatus, u] = await timed(
          fakeCtxFor(basic('mallory', 'wrong'), from()),
          through,
        );
        assert.deepEqual([wrongStatus, unknownStatus], [401, 401], kind);
        wrong.push(w);
        unknown.push(u);
      }
      const [rightStatus, right] = await timed(
        fakeCtxFor(basic('alice', 'right'), '198.51.100.250'),
        through,
      );
      const [cachedStatus, cached] = await timed(
        fakeCtxFor(basic('alice', 'right'), '198.51.100.250'),
        through,
      );
      assert.deepEqual([rightStatus, cachedStatus], [200, 200], kind);
      const typical = median(wrong);
      const vs = `${kind}: wrong password ${typical.toFixed(1)} CPU ms`;
      assert.ok(
        median(unknown) > typical / 3,
        `${vs}, unknown user ${median(unknown).toFixed(1)} ms`,
      );
      assert.ok(right > typical / 3, `${vs}, right password (not cached) ${right.toFixed(1)} ms`);
      assert.ok(cached < typical / 3, `${vs}, cached ${cached.toFixed(1)} ms`);
    }
  });

  it('parallel guesses from one client cannot pass the lock-out check together', async () => {
    const statuses = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        run(fakeCtxFor(basic('alice', `guess${i}`), '203.0.113.50')),
      ),
    );
    assert.equal(statuses.filter((s) => s === 401).length, 10);
    assert.equal(statuses.filter((s) => s === 429).length, 15);
    assert.equal(
      await run(fakeCtxFor(basic('alice', 'right'), '203.0.113.50')),
      429,
      'the right password too',
    );
    assert.ok(logged.includes('Too many failed authorization attempts for client 203.0.113.50'));
  });

  it('a re-run for an error page decides again but does not count or log again', async () => {
    const ctx = fakeCtxFor(basic('alice', 'wrong'), '203.0.113.60');
    assert.equal(await run(ctx), 401);
    const before = logged.length;
    ctx.errorStatus = 401;
    for (let i = 0; i < 12; i++) assert.equal(await run(ctx), 401);
    assert.equal(logged.length, before);
    assert.equal(services.bruteForce.isLockedOut('203.0.113.60'), false);
  });
});
