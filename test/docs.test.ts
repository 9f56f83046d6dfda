// docs/configuration.md and docs/portico.schema.json are generated from the property table; this
// fails when someone changed the table without running `npm run docs`.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';
import { generatedDocs } from '../src/config/generated-docs.js';
import { PROPERTY_TABLE } from '../src/modules/registry.js';
import { ROOT } from './helpers/cli.js';

for (const [path, text] of Object.entries(generatedDocs(PROPERTY_TABLE))) {
  it(`${path} is up to date (run npm run docs)`, () => {
    assert.equal(readFileSync(join(ROOT, path), 'utf8'), text);
  });
}

// The user documentation travels with the package: it never sends a reader to the project's own
// design documents, which are not in it (issue 16 point 10).
it('docs/ and the README point at nothing outside the repository', () => {
  const files = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((f) => join('docs', f))];
  for (const file of files.filter((f) => f.endsWith('.md'))) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const outside of [
      /SPEC-[a-z-]+\.md/,
      /CONTRACT\.md/,
      /REFERENCE-behaviour/,
      /ARCHITECTURE\.md/,
      /\.\.\/shared/,
    ])
      assert.doesNotMatch(text, outside, file);
  }
});

it('says what nonStandardCodes users does: it selects clients, it is no allow list', () => {
  const schema = readFileSync(join(ROOT, 'docs/portico.schema.json'), 'utf8');
  assert.match(schema, /this entry applies to; other clients pass it by/);
  assert.doesNotMatch(schema, /IP addresses \(or CIDR ranges\) allowed/);
  assert.match(
    readFileSync(join(ROOT, 'docs/configuration.md'), 'utf8'),
    /a relative path is relative to the directory of the configuration file/,
  );
});
