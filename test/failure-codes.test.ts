// docs/errors.md lists every FailureCode, and only those: log tools match on these words, so a code
// added, renamed or dropped must show on the page that users read.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

const read = (path: string): string => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');

test('docs/errors.md lists exactly the failure codes of src/http/http-error.ts', () => {
  const union = /export type FailureCode =([^;]+);/.exec(read('src/http/http-error.ts'));
  assert.ok(union, 'FailureCode is declared as a union of string literals');
  const declared = [...union[1]!.matchAll(/\|\s*'([a-z-]+)'/g)].map((m) => m[1]!);
  const documented = [...read('docs/errors.md').matchAll(/^\| `([a-z-]+)` \|/gm)].map((m) => m[1]!);
  assert.ok(declared.length >= 20, `found ${declared.length} codes`);
  assert.deepEqual([...documented].sort(), [...declared].sort());
  assert.equal(new Set(documented).size, documented.length, 'each code is listed once');
});
