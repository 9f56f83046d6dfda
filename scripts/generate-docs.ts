// Regenerates the files derived from the property table: docs/configuration.md and the JSON Schema.
// `npm run docs`; test/docs.test.ts fails when the committed files differ from what this writes.
import { writeFileSync } from 'node:fs';
import { generatedDocs } from '../src/config/generated-docs.js';
import { PROPERTY_TABLE } from '../src/modules/registry.js';

for (const [path, text] of Object.entries(generatedDocs(PROPERTY_TABLE))) writeFileSync(path, text);
