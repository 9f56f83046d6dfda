// `validate` promises what `run` checks before it listens: that each log file can be opened for
// appending. A log in a directory that does not exist, or one Portico may not write, is refused
// here with its position rather than by `run` after the configuration was called OK.
import { accessSync, constants, existsSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ConfigCheck } from '../config/checks.js';
import { inWords, pathProblem } from '../config/system-errors.js';

const LOG_PROPERTIES = ['logFilePath', 'errorLogFilePath'] as const;

export const checkLogFiles: ConfigCheck = (_config, scopes, diags, { files }) => {
  if (!files) return;
  for (const scope of scopes)
    for (const name of LOG_PROPERTIES) {
      const entry = scope.keys.get(name);
      const path = scope.settings[name];
      if (entry === undefined || typeof path !== 'string') continue;
      const problem = logFileProblem(path);
      if (problem !== undefined)
        diags.error(entry.value.pos, `${scope.path}.${name}`, `${path}: ${problem}`);
    }
};

function logFileProblem(path: string): string | undefined {
  const directory = dirname(path);
  const missing = pathProblem(directory, 'directory');
  if (missing !== undefined) return `cannot be opened: its directory ${directory}: ${missing}`;
  if (existsSync(path)) {
    const notFile = pathProblem(path, 'file');
    if (notFile !== undefined) return `cannot be opened: ${notFile}`;
  }
  try {
    accessSync(existsSync(path) ? path : directory, constants.W_OK);
  } catch (e) {
    return `cannot be written: ${inWords(e)}`;
  }
  return undefined;
}
