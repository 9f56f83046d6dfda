// Whether a command a configuration names can run here: a path is checked as it is, a bare name
// is looked up on the PATH as the kernel's exec would. `validate` reports an interpreter that is
// missing before a request finds out.
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Undefined when `command` runs here; otherwise why not, in words. */
export function missingExecutable(
  command: string,
  path = process.env.PATH ?? '',
): string | undefined {
  if (command.includes('/'))
    return runnable(command) ? undefined : `${command}: not an executable file`;
  for (const dir of path.split(delimiter))
    if (dir !== '' && runnable(join(dir, command))) return undefined;
  return `${command}: not found on the PATH`;
}

function runnable(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
