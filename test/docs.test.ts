// docs/configuration.md and docs/portico.schema.json are generated from the property table; this
// fails when someone changed the table without running `npm run docs`.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';
import { generatedDocs } from '../src/config/generated-docs.js';
import { ROOT } from './helpers/cli.js';

for (const [path, text] of Object.entries(generatedDocs())) {
  it(`${path} is up to date (run npm run docs)`, () => {
    assert.equal(readFileSync(join(ROOT, path), 'utf8'), text);
  });
}
