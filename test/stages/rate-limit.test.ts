// The rateLimit stage on its own: what each key kind keeps a bucket for (never a header's value
// itself, never more than a bounded size), the innermost limit checked first, the 429's fields,
// and the field defaults the property table documents.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ObjectSpec } from '../../src/config/types.js';
import { HttpError } from '../../src/http/http-error.js';
import { PROPERTY_TABLE } from '../../src/modules/registry.js';
import {
  rateLimit,
  withFieldDefaults,
  type LimitPlaces,
  type RateLimitEntry,
} from '../../src/stages/rate-limit.js';
import { MemoryBuckets } from '../../src/store/memory-store.js';
import type { BucketOptions } from '../../src/store/shared-store.js';
import { fakeCtx, runStage, type FakeOptions } from '../helpers/ctx.js';

/** Places that hand each limit memory buckets, named by its index, and record the keys taken. */
function recording() {
  const keys: string[] = [];
  const options: BucketOptions[] = [];
  const places: LimitPlaces = {
    place(_limit, given) {
      options.push(given);
      const buckets = new MemoryBuckets(given);
      const take = buckets.take.bind(buckets);
      buckets.take = (key) => (keys.push(key), take(key));
      return { buckets, policy: `p${options.length - 1}` };
    },
  };
  return { keys, options, places };
}

async function keyFor(key: string, request: FakeOptions): Promise<string> {
  const { keys, places } = recording();
  const stage = rateLimit({ rateLimit: [{ requests: 5, key }] } as never, places)!;
  const { ctx, written } = fakeCtx(request);
  assert.equal(await runStage(stage, ctx, written), 'next');
  return keys[0]!;
}

describe('rateLimit stage', () => {
  it('keeps a bucket per address, an IPv6 client by its /64', async () => {
    assert.equal(await keyFor('clientIP', { clientAddress: '192.0.2.7' }), '192.0.2.7');
    assert.equal(
      await keyFor('clientIP', { clientAddress: '2001:db8:1:2:aaaa::1' }),
      await keyFor('clientIP', { clientAddress: '2001:db8:1:2:bbbb::9' }),
    );
  });

  it('keeps a header’s value as its digest, and its absence as the address', async () => {
    const secret = `key-${'s'.repeat(5000)}`;
    const key = await keyFor('header:X-Api-Key', { headers: { 'x-api-key': secret } });
    assert.match(key, /^[A-Za-z0-9_-]{43}$/);
    assert.notEqual(key, await keyFor('header:X-Api-Key', { headers: { 'x-api-key': 'another' } }));
    assert.equal(await keyFor('header:X-Api-Key', { clientAddress: '192.0.2.7' }), '192.0.2.7');
  });

  it('keeps a path as it is, a very long one as its digest', async () => {
    assert.equal(await keyFor('uri', { path: '/a/b', query: '?x=1' }), '/a/b');
    assert.match(await keyFor('uri', { path: `/${'a'.repeat(300)}` }), /^[A-Za-z0-9_-]{43}$/);
  });

  it('checks the innermost limit first, and refuses with Retry-After and the draft’s fields', async () => {
    const { keys, options, places } = recording();
    const entries: RateLimitEntry[] = [
      { requests: 100, per: '1m' },
      { requests: 1, per: '1h', burst: 1, key: 'uri' },
    ];
    const stage = rateLimit({ rateLimit: entries } as never, places)!;
    assert.deepEqual(options, [
      { intervalMs: 600, burst: 100, maxKeys: 100_000 },
      { intervalMs: 3_600_000, burst: 1, maxKeys: 100_000 },
    ]);
    const { ctx, written } = fakeCtx({ path: '/x' });
    assert.equal(await runStage(stage, ctx, written), 'next');
    assert.deepEqual(keys, ['/x', '192.0.2.1']);
    let refusal: HttpError | undefined;
    try {
      void stage(ctx, () => undefined);
    } catch (e) {
      refusal = e as HttpError;
    }
    assert.ok(refusal instanceof HttpError, 'refused');
    assert.equal(refusal.status, 429);
    assert.equal(refusal.code, 'rate-limited');
    assert.deepEqual(refusal.headers, [
      ['Retry-After', '3600'],
      ['RateLimit-Policy', '"p1";q=1;w=3600'],
      ['RateLimit', '"p1";r=0;t=3600'],
    ]);
    // Refused by the innermost: the outer limit was not asked.
    assert.deepEqual(keys, ['/x', '192.0.2.1', '/x']);
  });

  it('fills in the defaults the property table documents', () => {
    const fields = (PROPERTY_TABLE.row('rateLimit')!.type as { of: ObjectSpec }).of.fields;
    const filled = withFieldDefaults({ requests: 7 });
    for (const name of ['per', 'key', 'maxKeys'] as const)
      assert.equal(filled[name], fields[name]!.default, name);
    assert.equal(filled.burst, 7);
  });
});
