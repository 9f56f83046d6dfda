// Portico's version, from package.json (one place for `--version`, `/status` and logs).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const PACKAGE_JSON = fileURLToPath(new URL('../package.json', import.meta.url));
export const VERSION: string = (
  JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { version: string }
).version;
