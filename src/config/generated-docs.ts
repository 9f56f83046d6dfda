// The files in docs/ that are derived from the property table, by path relative to the repository.
import { referenceMarkdown } from './reference.js';
import { configSchema } from './schema.js';

export function generatedDocs(): Record<string, string> {
  return {
    'docs/configuration.md': referenceMarkdown(),
    'docs/portico.schema.json': `${JSON.stringify(configSchema(), null, 2)}\n`,
  };
}
