// `validate` promises what `run` checks when it binds a Unix-socket listener: that its folder exists
// and Portico may create the socket there, and that nothing but a socket (a stale one is removed
// at start) is at the path. Each problem is reported at the entry of `port` or `sport` naming it.
import { accessSync, constants, lstatSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ConfigCheck } from '../config/checks.js';
import { boundEntries } from '../config/listener-checks.js';
import { inWords, pathProblem } from '../config/system-errors.js';

export const checkSocketPaths: ConfigCheck = (config, scopes, diags, { files }) => {
  if (!files) return;
  const record = scopes.find((s) => s.scope === 'global');
  for (const entry of boundEntries(config.global, record)) {
    if (entry.address.kind !== 'unix') continue;
    const problem = socketPathProblem(entry.address.path);
    if (problem !== undefined) diags.error(entry.pos, `global.${entry.path}`, problem);
  }
};

function socketPathProblem(path: string): string | undefined {
  const folder = dirname(path);
  const missing = pathProblem(folder, 'directory');
  if (missing !== undefined) return `${path}: its folder ${folder}: ${missing}`;
  try {
    accessSync(folder, constants.W_OK | constants.X_OK);
  } catch (e) {
    return `${path}: the socket cannot be made in ${folder}: ${inWords(e)}`;
  }
  try {
    if (!lstatSync(path).isSocket())
      return `${path} exists and is not a socket (Portico removes only a stale socket file)`;
  } catch {
    // Nothing there: the socket is made at start.
  }
  return undefined;
}
