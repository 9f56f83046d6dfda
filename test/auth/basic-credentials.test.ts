import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseBasicAuthorization } from '../../src/auth/basic-credentials.js';

// Node gives header values as latin1 strings: one character per byte on the wire.
const basic = (userPass: string): string =>
  `Basic ${Buffer.from(userPass, 'utf8').toString('base64')}`;

test('user and password, split at the first colon', () => {
  assert.deepEqual(parseBasicAuthorization(basic('alice:secret')), {
    kind: 'credentials',
    name: 'alice',
    password: 'secret',
  });
  assert.deepEqual(parseBasicAuthorization(basic('alice:a:b:c')), {
    kind: 'credentials',
    name: 'alice',
    password: 'a:b:c',
  });
  assert.deepEqual(parseBasicAuthorization(basic(':')), {
    kind: 'credentials',
    name: '',
    password: '',
  });
  assert.deepEqual(parseBasicAuthorization(basic('bob:')), {
    kind: 'credentials',
    name: 'bob',
    password: '',
  });
});

test('UTF-8 names and passwords', () => {
  assert.deepEqual(parseBasicAuthorization(basic('jürgen:pässwörd ✓')), {
    kind: 'credentials',
    name: 'jürgen',
    password: 'pässwörd ✓',
  });
  assert.deepEqual(parseBasicAuthorization(basic('\ufeffbom:x')), {
    kind: 'credentials',
    name: '\ufeffbom',
    password: 'x',
  });
});

test('the scheme name is case-insensitive', () => {
  const b64 = Buffer.from('a:b').toString('base64');
  for (const scheme of ['basic', 'BASIC', 'bAsIc']) {
    assert.equal(parseBasicAuthorization(`${scheme} ${b64}`).kind, 'credentials', scheme);
  }
});

test('absent or malformed headers are "missing" (a plain 401)', () => {
  const malformed = [
    undefined,
    '',
    'Basic',
    'Basic ',
    'Bearer abc',
    `Basic  ${Buffer.from('a:b').toString('base64')}`, // two spaces
    `Basic ${Buffer.from('no colon').toString('base64')}`,
    'Basic YTpiYw', // unpadded
    'Basic YTpiYw=', // short padding
    'Basic YTp-Yw==', // URL-safe alphabet
    'Basic YT pi', // space inside
    'Basic YTpiYx==', // non-canonical trailing bits
    `Basic ${Buffer.from([0x61, 0x3a, 0xff, 0xfe]).toString('base64')}`, // not UTF-8
  ];
  for (const header of malformed) {
    assert.deepEqual(parseBasicAuthorization(header), { kind: 'missing' }, String(header));
  }
});

test('bytes outside visible ASCII are "invalid" (400); tab and space are allowed', () => {
  assert.deepEqual(parseBasicAuthorization('Basic YTpi\x01'), { kind: 'invalid' });
  assert.deepEqual(parseBasicAuthorization('Basic \xe9'), { kind: 'invalid' });
  assert.deepEqual(parseBasicAuthorization('Bearer \x7f'), { kind: 'invalid' });
  assert.deepEqual(parseBasicAuthorization('Basic\tYTpi'), { kind: 'missing' });
});
