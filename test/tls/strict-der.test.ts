import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { OctetString } from '@peculiar/asn1-schema';

import { DerError, decode, elements, readGeneralizedTime } from '../../src/tls/strict-der.js';

const hex = (text: string): Buffer => Buffer.from(text.replace(/\s/g, ''), 'hex');
const time = (text: string): Buffer =>
  Buffer.concat([Buffer.from([0x18, text.length]), Buffer.from(text, 'latin1')]);

describe('one DER element', () => {
  it('reads short and long lengths, and refuses what follows the element', () => {
    assert.deepEqual(Buffer.from(decode(hex('04 02 abcd'), OctetString, 'x').buffer), hex('abcd'));
    const long = Buffer.concat([hex('04 82 0100'), Buffer.alloc(256, 7)]);
    assert.equal(decode(long, OctetString, 'x').byteLength, 256);
    assert.throws(
      () => decode(Buffer.concat([long, hex('00')]), OctetString, 'thing'),
      /^DerError: thing: 1 bytes of trailing data$/,
    );
  });

  it('refuses indefinite lengths and truncations, naming what was read', () => {
    assert.throws(
      () => decode(hex('24 80 0402abcd 0000'), OctetString, 'value'),
      /^DerError: value: indefinite length is not DER$/,
    );
    assert.throws(() => decode(hex('04 05 0102'), OctetString, 'value'), /^DerError: value: /);
    assert.throws(() => decode(Buffer.alloc(0), OctetString, 'value'), DerError);
  });
});

describe('the elements of a SEQUENCE, as encoded', () => {
  it('splits a SEQUENCE and an explicit tag into the encodings of their elements', () => {
    const inner = [hex('02 01 05'), hex('0c 02 c328'), hex('a0 03 020101')];
    const sequence = Buffer.concat([hex('30 0c'), ...inner]);
    assert.deepEqual(
      elements(sequence, 'seq').map((e) => Buffer.from(e)),
      inner,
    );
    assert.deepEqual(
      elements(hex('a0 03 020101'), 'explicit').map((e) => Buffer.from(e)),
      [hex('02 01 01')],
    );
    assert.deepEqual(elements(hex('30 00'), 'empty'), []);
  });

  it('refuses what is not one constructed element', () => {
    assert.throws(() => elements(undefined, 'absent'), /^DerError: absent: /);
    assert.throws(() => elements(hex('30 03 0201'), 'short'), /^DerError: short: /);
    assert.throws(() => elements(hex('30 00 00'), 'long'), /^DerError: long: 1 bytes/);
  });
});

describe('GeneralizedTime in DER form', () => {
  it('UTC with seconds, and an optional fraction', () => {
    assert.equal(
      readGeneralizedTime(time('20260102030405Z'), 't').toISOString(),
      '2026-01-02T03:04:05.000Z',
    );
    assert.equal(
      readGeneralizedTime(time('20240229235959.5Z'), 't').toISOString(),
      '2024-02-29T23:59:59.500Z',
    );
    assert.equal(
      readGeneralizedTime(time('20240229235959.123456Z'), 't').toISOString(),
      '2024-02-29T23:59:59.123Z',
    );
  });

  it('refuses the other forms and impossible dates', () => {
    for (const bad of ['20260102030405', '260102030405Z', '20260102030405+0100', '2026010203Z'])
      assert.throws(
        () => readGeneralizedTime(time(bad), 'thisUpdate'),
        new RegExp(
          `^DerError: thisUpdate: "${bad.replace('+', '\\+')}" is not a UTC GeneralizedTime$`,
        ),
      );
    for (const bad of ['20260230000000Z', '20261301000000Z', '20260101240000Z'])
      assert.throws(() => readGeneralizedTime(time(bad), 't'), /is not a valid time$/, bad);
    assert.throws(
      () => readGeneralizedTime(hex('17 0d 3236303130323033303430355a'), 't'),
      /is not a UTC GeneralizedTime/,
      'a UTCTime',
    );
    assert.throws(() => readGeneralizedTime(undefined, 't'), /is not a UTC GeneralizedTime/);
  });
});
