// The request fields a backend sees: the client's, with what a stage replaced.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { replacedFields } from '../../src/http/outgoing-fields.js';

const client = {
  headers: { host: 'a.test', 'if-none-match': '"x"', 'if-match': '"y"', accept: '*/*' },
  rawHeaders: ['Host', 'a.test', 'If-None-Match', '"x"', 'If-Match', '"y"', 'Accept', '*/*'],
};

it('replaces, removes and adds fields in both forms alike', () => {
  const fields = replacedFields(
    client,
    new Map([
      ['if-none-match', '"stored"'],
      ['if-match', undefined],
      ['if-modified-since', undefined],
      ['if-unmodified-since', 'date'],
    ]),
  );
  assert.deepEqual(fields.rawHeaders, [
    'Host',
    'a.test',
    'Accept',
    '*/*',
    'if-none-match',
    '"stored"',
    'if-unmodified-since',
    'date',
  ]);
  assert.deepEqual(Object.entries(fields.headers), [
    ['host', 'a.test'],
    ['accept', '*/*'],
    ['if-none-match', '"stored"'],
    ['if-unmodified-since', 'date'],
  ]);
  assert.equal(client.headers['if-none-match'], '"x"', 'the client request is left as it is');
});

it('layers on fields a stage already replaced', () => {
  const once = replacedFields(client, new Map([['if-none-match', '"a"']]));
  const twice = replacedFields(once, new Map([['if-none-match', '"b"']]));
  assert.equal(twice.headers['if-none-match'], '"b"');
  assert.equal(twice.rawHeaders.filter((v) => v === '"a"').length, 0);
});
