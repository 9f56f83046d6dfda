import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';

import {
  DerError,
  Tag,
  children,
  contextTag,
  decode,
  encode,
  encodeOid,
  expectTag,
  explicit,
  readBitString,
  readElements,
  readGeneralizedTime,
  readNull,
  readOid,
  readSmallInteger,
  type DerElement,
} from '../../src/tls/der.js';

const hex = (text: string): Buffer => Buffer.from(text.replace(/\s/g, ''), 'hex');
const element = (tag: number, content: Buffer): DerElement => decode(encode(tag, content));

/** Decodes `buf` and every constructed element inside it, as a parser of real structures would. */
function walk(buf: Buffer): void {
  const pending = [decode(buf)];
  for (let next = pending.pop(); next; next = pending.pop()) {
    if (next.tag & 0x20) pending.push(...children(next, 'fuzz'));
  }
}

// A nested structure with every kind of element the OCSP code reads.
const SAMPLE = encode(
  Tag.SEQUENCE,
  encode(Tag.ENUMERATED, hex('00')),
  encode(
    contextTag(0, true),
    encode(
      Tag.SEQUENCE,
      encodeOid('1.3.6.1.5.5.7.48.1.1'),
      encode(Tag.OCTET_STRING, Buffer.alloc(300, 7)),
      encode(Tag.GENERALIZED_TIME, Buffer.from('20260102030405Z')),
      encode(Tag.BIT_STRING, hex('00 ff ee')),
      encode(contextTag(2, false)),
      encode(Tag.NULL),
    ),
  ),
);

describe('DER lengths', () => {
  it('writes the minimal form and reads back the same content', () => {
    const cases: Array<[number, string]> = [
      [0, '0400'],
      [127, '047f'],
      [128, '048180'],
      [255, '0481ff'],
      [256, '04820100'],
      [65_536, '0483010000'],
    ];
    for (const [size, header] of cases) {
      const encoded = encode(Tag.OCTET_STRING, Buffer.alloc(size, 1));
      assert.equal(encoded.subarray(0, header.length / 2).toString('hex'), header, `size ${size}`);
      const decoded = decode(encoded);
      assert.equal(decoded.tag, Tag.OCTET_STRING);
      assert.deepEqual(decoded.content, Buffer.alloc(size, 1));
      assert.equal(decoded.encoded.length, encoded.length);
    }
  });

  it('reads non-minimal long-form lengths (BER, harmless) but not indefinite ones', () => {
    assert.deepEqual(decode(hex('04 82 0002 abcd')).content, hex('abcd'));
    assert.throws(() => decode(hex('30 80 0000')), /indefinite length/);
    assert.throws(() => decode(hex('04 85 0000000001 00')), /length of 5 octets is too long/);
  });

  it('refuses what does not fit: truncated contents, truncated length, missing length, trailing data', () => {
    assert.throws(
      () => decode(hex('04 05 0102')),
      (err: Error) => err instanceof DerError && /needs 5 bytes, 2 left/.test(err.message),
    );
    assert.throws(() => decode(hex('04 82 01')), /truncated/);
    assert.throws(() => decode(hex('04')), /truncated/);
    assert.throws(() => decode(Buffer.alloc(0)), /truncated/);
    assert.throws(() => decode(hex('0500 00'), 'thing'), /thing: 1 bytes of trailing data/);
    assert.throws(() => readElements(hex('0500 04')), /truncated/);
  });

  it('refuses high tag numbers', () => {
    assert.throws(() => decode(hex('1f 81 00 00')), /high tag numbers/);
  });
});

describe('DER structure', () => {
  it('walks a nested structure, with views of the original bytes', () => {
    const [status, wrapped] = children(decode(SAMPLE), 'sample');
    assert.equal(readSmallInteger(expectTag(status, Tag.ENUMERATED, 'status'), 'status'), 0);
    const inner = children(
      explicit(expectTag(wrapped, contextTag(0, true), 'wrapped'), 'wrapped'),
      'inner',
    );
    assert.deepEqual(
      inner.map((e) => e.tag),
      [Tag.OID, Tag.OCTET_STRING, Tag.GENERALIZED_TIME, Tag.BIT_STRING, 0x82, Tag.NULL],
    );
    assert.equal(readOid(inner[0]!, 'oid'), '1.3.6.1.5.5.7.48.1.1');
    assert.equal(inner[1]!.content.buffer, SAMPLE.buffer, 'content is a view, not a copy');
    assert.deepEqual(readBitString(inner[3]!, 'bits'), hex('ffee'));
    assert.equal(readNull(inner[5]!, 'null'), null);
  });

  it('names what is missing or unexpected', () => {
    assert.throws(
      () => expectTag(undefined, Tag.SEQUENCE, 'tbsCertificate'),
      /tbsCertificate: missing, expected SEQUENCE/,
    );
    assert.throws(
      () => expectTag(element(Tag.INTEGER, hex('01')), Tag.OCTET_STRING, 'hash'),
      /hash: expected OCTET STRING, found INTEGER/,
    );
    assert.throws(
      () => expectTag(element(0xa3, Buffer.alloc(0)), Tag.SEQUENCE, 'x'),
      /found \[3\]/,
    );
    assert.throws(
      () => children(element(Tag.INTEGER, hex('01')), 'serial'),
      /serial: INTEGER is not constructed/,
    );
    assert.throws(
      () => explicit(decode(encode(0xa0, encode(Tag.NULL), encode(Tag.NULL))), 'version'),
      /must hold one element, found 2/,
    );
  });

  it('context tags', () => {
    assert.equal(contextTag(0, true), 0xa0);
    assert.equal(contextTag(1, true), 0xa1);
    assert.equal(contextTag(6, false), 0x86);
    assert.throws(() => contextTag(31, false), RangeError);
  });
});

describe('DER values', () => {
  it('small integers, signed, up to 6 octets', () => {
    assert.equal(readSmallInteger(element(Tag.ENUMERATED, hex('03')), 'n'), 3);
    assert.equal(readSmallInteger(element(Tag.INTEGER, hex('00ff')), 'n'), 255);
    assert.equal(readSmallInteger(element(Tag.INTEGER, hex('ff')), 'n'), -1);
    assert.throws(() => readSmallInteger(element(Tag.INTEGER, Buffer.alloc(0)), 'n'), /0 octets/);
    assert.throws(() => readSmallInteger(element(Tag.INTEGER, Buffer.alloc(7)), 'n'), /7 octets/);
  });

  it('BIT STRINGs of whole octets only', () => {
    assert.deepEqual(readBitString(element(Tag.BIT_STRING, hex('00')), 'b'), Buffer.alloc(0));
    assert.throws(
      () => readBitString(element(Tag.BIT_STRING, Buffer.alloc(0)), 'b'),
      /empty BIT STRING/,
    );
    assert.throws(() => readBitString(element(Tag.BIT_STRING, hex('0380')), 'b'), /3 unused bits/);
  });

  it('NULL must be empty', () => {
    assert.throws(() => readNull(element(Tag.NULL, hex('00')), 'good'), /good: NULL must be empty/);
  });

  it('OIDs, both ways, including multi-octet arcs and the 2.x arc', () => {
    const cases: Array<[string, string]> = [
      ['1.3.14.3.2.26', '06052b0e03021a'],
      ['1.2.840.113549.1.1.11', '06092a864886f70d01010b'],
      ['1.3.6.1.5.5.7.48.1', '06082b06010505073001'],
      ['2.999.3', '0603883703'],
      ['0.9.2342', '0603099226'],
    ];
    for (const [oid, der] of cases) {
      assert.equal(encodeOid(oid).toString('hex'), der, oid);
      assert.equal(readOid(decode(hex(der)), 'oid'), oid);
    }
  });

  it('refuses malformed OIDs', () => {
    for (const bad of ['', '1', '3.1', '1.40', '1.2.x', '1..2', '1.2.-3'])
      assert.throws(() => encodeOid(bad), RangeError, bad);
    assert.throws(
      () => readOid(element(Tag.OID, Buffer.alloc(0)), 'oid'),
      /truncated or empty OID/,
    );
    assert.throws(() => readOid(element(Tag.OID, hex('2b86')), 'oid'), /truncated or empty OID/);
    assert.throws(() => readOid(element(Tag.OID, hex('2b8001')), 'oid'), /leading 0x80/);
    assert.throws(
      () => readOid(element(Tag.OID, hex('2b ffffffffffffffff7f')), 'oid'),
      /too large/,
    );
  });

  it('GeneralizedTime in UTC, with an optional fraction', () => {
    const time = (text: string): Date =>
      readGeneralizedTime(element(Tag.GENERALIZED_TIME, Buffer.from(text)), 'time');
    assert.equal(time('20260102030405Z').toISOString(), '2026-01-02T03:04:05.000Z');
    assert.equal(time('20240229235959.5Z').toISOString(), '2024-02-29T23:59:59.500Z');
    for (const bad of [
      '20260230000000Z',
      '20261301000000Z',
      '20260101240000Z',
      '20260102030405',
      '260102030405Z',
      '20260102030405+0100',
      '2026010203Z',
    ]) {
      assert.throws(() => time(bad), /not a (valid|UTC GeneralizedTime)/, bad);
    }
  });
});

describe('DER on hostile input', () => {
  it('every truncation of a valid structure throws a DerError', () => {
    for (let length = 0; length < SAMPLE.length; length++) {
      assert.throws(() => walk(SAMPLE.subarray(0, length)), DerError, `prefix of ${length} bytes`);
    }
    walk(SAMPLE);
  });

  it('random bytes and mutated structures: a DerError or a result, quickly, never anything else', () => {
    const started = performance.now();
    const inputs = [
      ...Array.from({ length: 3000 }, () => randomBytes(1 + Math.floor(Math.random() * 64))),
      ...Array.from({ length: 3000 }, () => {
        const mutated = Buffer.from(SAMPLE);
        for (let i = 0; i < 3; i++)
          mutated[Math.floor(Math.random() * mutated.length)] = Math.floor(Math.random() * 256);
        return mutated;
      }),
    ];
    for (const input of inputs) {
      try {
        walk(input);
      } catch (err) {
        if (!(err instanceof DerError)) assert.fail(`${input.toString('hex')}: ${String(err)}`);
      }
    }
    assert.ok(performance.now() - started < 5000);
  });

  it('a huge declared length is refused without allocating', () => {
    assert.throws(() => decode(hex('30 84 ffffffff 00')), /needs 4294967295 bytes, 1 left/);
  });
});
