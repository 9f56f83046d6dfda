// The files in docs/ that are derived from the property table, by path relative to the repository:
// what `npm run docs` writes from the build's table (modules/registry.ts).
import type { PropertyTable } from './property-table.js';
import { referenceMarkdown } from './reference.js';
import { configSchema } from './schema.js';

export function generatedDocs(properties: PropertyTable): Record<string, string> {
  return {
    'docs/configuration.md': referenceMarkdown(properties),
    'docs/portico.schema.json': `${JSON.stringify(configSchema(properties), null, 2)}\n`,
  };
}
