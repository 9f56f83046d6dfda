// The sanitizer's rules (REFERENCE-behaviour.md §3, with Portico's stricter NUL handling).
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { HttpError } from '../../src/http/http-error.js';
import { decodePath, sanitizePath } from '../../src/http/paths.js';

const cases: [string, string, boolean?][] = [
  ['/', '/'],
  ['/index.html', '/index.html'],
  ['/../../etc/passwd', '/etc/passwd'],
  ['/a//b', '/a/b'],
  ['//a//b/', '//a//b/', true],
  ['test\\path', '/test/path'],
  ['/%73vr%32.js', '/svr2.js'],
  ['/a/%2e%2e/%2E%2e/b', '/b'],
  ['/a%2fb', '/a/b'],
  ['/%5c..%5c', '/%5C..%5C'],
  ['/test.../x.', '/test/x'],
  ['/a/../', '/'],
  ['/a/./b/.', '/a/b'],
  ['/<script>', '/%3Cscript%3E'],
  ['/a b', '/a%20b'],
  ['/caf\u00c3\u00a9', '/caf%C3%A9'],
  ['/%20%25', '/%20%25'],
  ['/.well-known/x', '/.well-known/x'],
];

it('canonicalises paths', () => {
  for (const [input, expected, doubleSlashes] of cases)
    assert.equal(sanitizePath(input, doubleSlashes ?? false), expected, input);
});

it('refuses NUL, broken escapes and invalid UTF-8 lead bytes with 400', () => {
  for (const input of ['/\0', '/%00', '/%0', '/%zz', '/%', '/%c0%af', '/%C1', '/%fe', '/%FF']) {
    assert.throws(
      () => sanitizePath(input, false),
      (e: unknown) => e instanceof HttpError && e.status === 400,
      input,
    );
  }
});

it('decodes once for the filesystem, refusing invalid UTF-8', () => {
  assert.equal(decodePath('/caf%C3%A9%20x'), '/café x');
  assert.equal(decodePath('/%5C..%5C'), '/\\..\\');
  assert.throws(
    () => decodePath('/%80'),
    (e: unknown) => e instanceof HttpError && e.status === 400,
  );
});
