// Content-coding negotiation, one for static files and dynamic responses: RFC 9110 §12.5.3 with
// q-values, over the codings this Node makes (zstd only where Node has it).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import zlib from 'node:zlib';
import {
  acceptedEncodings,
  ENCODINGS,
  encodingsFor,
  negotiateEncoding,
  Negotiation,
} from '../../src/http/encoding-negotiation.js';
import { ZSTD, zstdOf } from '../../src/http/zstd.js';

// Each case: the header, the coding chosen without zstd, and with it.
const CASES: [string | undefined, string | undefined, string | undefined][] = [
  [undefined, undefined, undefined],
  ['', undefined, undefined],
  ['gzip, deflate, br', 'br', 'br'],
  ['gzip, deflate, br, zstd', 'br', 'br'],
  ['gzip, deflate', 'gzip', 'gzip'],
  ['deflate', 'deflate', 'deflate'],
  ['x-gzip', 'gzip', 'gzip'],
  ['GZIP', 'gzip', 'gzip'],
  ['br;q=0.5, gzip', 'gzip', 'gzip'],
  ['br;q=0.5, gzip;q=0.5, deflate;q=0.5', 'br', 'br'],
  ['gzip;q=0.2, deflate;q=0.8', 'deflate', 'deflate'],
  ['br;q=0, gzip;q=0', undefined, undefined],
  ['br;q=0', undefined, undefined],
  ['*', 'br', 'br'],
  ['*;q=0.5, br;q=0', 'gzip', 'zstd'],
  ['*;q=0', undefined, undefined],
  ['identity', undefined, undefined],
  ['identity;q=1, gzip;q=0.5', undefined, undefined],
  ['identity;q=0.5, gzip;q=0.5', 'gzip', 'gzip'],
  ['identity;q=0, gzip', 'gzip', 'gzip'],
  ['gzip ; q=0.800, br ; q=0.799', 'gzip', 'gzip'],
  ['gzip;q=1.0', 'gzip', 'gzip'],
  ['br;q=2, gzip', 'gzip', 'gzip'], // a broken weight drops the member
  ['br;q=0.5, br;q=1', 'br', 'br'],
  ['zstd, compress', undefined, 'zstd'],
  ['zstd, gzip', 'gzip', 'zstd'],
  ['zstd;q=0.5, gzip', 'gzip', 'gzip'],
];

for (const zstd of [false, true]) {
  describe(`negotiation ${zstd ? 'with' : 'without'} zstd`, () => {
    const negotiation = new Negotiation(encodingsFor(zstd));
    for (const [header, without, withZstd] of CASES) {
      const expected = zstd ? withZstd : without;
      it(`${JSON.stringify(header)} → ${expected ?? 'identity'}`, () => {
        assert.equal(negotiation.chosen(header), expected);
        assert.equal(negotiation.chosen(header), expected, 'memoized answer');
      });
    }

    it('lists what a client accepts, best first, ties in the preference order', () => {
      assert.deepEqual(negotiation.accepted('gzip, br'), ['br', 'gzip']);
      assert.deepEqual(negotiation.accepted('gzip;q=1, br;q=0.5, deflate;q=0'), ['gzip', 'br']);
      assert.deepEqual(
        negotiation.accepted('*;q=0.1, gzip'),
        zstd ? ['gzip', 'br', 'zstd', 'deflate'] : ['gzip', 'br', 'deflate'],
      );
      assert.deepEqual(negotiation.accepted('identity;q=1, gzip;q=0.5'), []);
      assert.deepEqual(negotiation.accepted(undefined), []);
    });
  });
}

describe('this Node', () => {
  it('offers zstd exactly when its zlib has it', () => {
    const has = typeof (zlib as { createZstdCompress?: unknown }).createZstdCompress === 'function';
    assert.equal(ZSTD !== undefined, has);
    assert.equal(ENCODINGS.includes('zstd'), has);
    assert.equal(negotiateEncoding('zstd'), has ? 'zstd' : undefined);
    assert.deepEqual(acceptedEncodings('gzip, zstd'), has ? ['zstd', 'gzip'] : ['gzip']);
  });

  it('finds zstd in a zlib that has it, and none in one without', () => {
    const flush = () => undefined;
    const constants = { ZSTD_c_compressionLevel: 100, ZSTD_c_windowLog: 101, ZSTD_e_flush: 1 };
    const found = zstdOf({ createZstdCompress: flush, zstdCompress: flush, constants });
    assert.deepEqual(
      { level: found?.levelKey, window: found?.windowLogKey, flush: found?.flushKind },
      { level: 100, window: 101, flush: 1 },
    );
    assert.equal(zstdOf({ constants }), undefined);
    assert.equal(
      zstdOf({ createZstdCompress: flush, zstdCompress: flush, constants: {} }),
      undefined,
    );
  });
});
