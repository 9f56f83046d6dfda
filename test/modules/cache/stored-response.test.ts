// What the cache keeps of a response (RFC 9111 §3) and how a 304 updates it (§3.2, §4.3.4).
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { parseCacheControl } from '../../../src/modules/cache/cache-control.js';
import { currentAge } from '../../../src/modules/cache/freshness.js';
import { freshened, refusal, storedResponse } from '../../../src/modules/cache/stored-response.js';

const at = 1_700_000_000_000;
const stored = (headers: string[]) =>
  storedResponse({
    primary: 'http://x/a',
    status: 200,
    headers,
    body: Buffer.from('body'),
    varyFields: [],
    varyValues: [],
    ignored: new Set(['x-secret']),
    directives: parseCacheControl(headers[headers.indexOf('Cache-Control') + 1]),
    requestTime: at,
    responseTime: at,
  });

it('keeps every field but Age, hop-by-hop ones and cacheIgnoreHeaders; adds a Date when missing', () => {
  const e = stored([
    'Cache-Control',
    'max-age=60',
    'Age',
    '3',
    'Keep-Alive',
    'timeout=5',
    'X-Secret',
    's',
    'X-Other',
    'o',
  ]);
  assert.deepEqual(e.headers, [
    'Cache-Control',
    'max-age=60',
    'X-Other',
    'o',
    'Date',
    new Date(at).toUTCString(),
  ]);
  assert.equal(e.initialAge, 3);
});

it('a 304 replaces the fields it carries but the content length and coding, and counts its own age', () => {
  const e = stored([
    'Cache-Control',
    'max-age=60',
    'ETag',
    '"a"',
    'Content-Length',
    '4',
    'Content-Encoding',
    'gzip',
    'Date',
    new Date(at - 100_000).toUTCString(),
    'X-V',
    '1',
  ]);
  const later = at + 500_000;
  const updated = freshened(
    e,
    ['ETag', 'W/"a"', 'X-V', '2', 'Content-Length', '0', 'Content-Encoding', 'br'],
    { requestTime: later, responseTime: later },
    new Set(),
  );
  assert.ok(updated);
  const fields = Object.fromEntries(
    Array.from({ length: updated.headers.length / 2 }, (_, i) => [
      updated.headers[2 * i]!.toLowerCase(),
      updated.headers[2 * i + 1],
    ]),
  );
  assert.equal(fields['x-v'], '2');
  assert.equal(fields['content-length'], '4');
  assert.equal(fields['content-encoding'], 'gzip');
  assert.equal(
    fields.date,
    new Date(later).toUTCString(),
    'a 304 without Date is dated on arrival',
  );
  assert.ok(currentAge(updated, later) < 1, 'fresh again');
  assert.equal(
    freshened(e, ['ETag', '"b"'], { requestTime: later, responseTime: later }, new Set()),
    undefined,
  );
});

it('refuses what §3 forbids, and what could never be reused', () => {
  const cc = (v: string) => parseCacheControl(v);
  const plain = { authorization: false, ignored: new Set<string>() };
  assert.equal(refusal(200, [], cc('max-age=5'), plain), undefined);
  assert.equal(refusal(206, [], cc('max-age=5'), plain), 'partial');
  assert.equal(refusal(200, [], cc('max-age=5, no-store'), plain), 'no-store');
  assert.equal(refusal(200, [], cc('max-age=5, private'), plain), 'private');
  assert.equal(refusal(200, [], cc('max-age=5, private="x"'), plain), undefined);
  assert.equal(
    refusal(200, [], cc('max-age=5'), { ...plain, authorization: true }),
    'authorization',
  );
  assert.equal(refusal(200, [], cc('s-maxage=5'), { ...plain, authorization: true }), undefined);
  assert.equal(refusal(200, ['Vary', 'a, *'], cc('max-age=5'), plain), 'vary-star');
  assert.equal(refusal(200, [], cc(''), plain), 'no-freshness');
  assert.equal(refusal(200, ['ETag', '"a"'], cc(''), plain), undefined);
  assert.equal(refusal(299, [], cc('max-age=5, must-understand, no-store'), plain), 'status');
});
