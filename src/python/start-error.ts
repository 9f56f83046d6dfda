// An application that could not start: what the bridge said of it (the traceback goes to the error
// log), and, when a package is missing, which usual interpreter has it.
import { execFile } from 'node:child_process';
import { realpath } from 'node:fs/promises';
import { basename, dirname } from 'node:path';

/** The application could not start: the message names the interpreter and quotes Python. */
export class PythonStartError extends Error {}

/** Interpreters users often have besides the one on the PATH (Debian's, a /usr/local build). */
const OTHER_INTERPRETERS = ['/usr/bin/python3', '/usr/local/bin/python3'];

/** Another interpreter that can import `module`, if one of the usual ones can. */
async function interpreterWith(module: string, tried: string): Promise<string | undefined> {
  const triedReal = await realpath(tried).catch(() => tried);
  for (const candidate of OTHER_INTERPRETERS) {
    const real = await realpath(candidate).catch(() => undefined);
    if (real === undefined || real === triedReal) continue;
    const ok = await new Promise<boolean>((done) =>
      execFile(candidate, ['-c', `import ${module}`], { timeout: 5000 }, (e) => done(e === null)),
    );
    if (ok) return candidate;
  }
  return undefined;
}

/**
 * The folder named `name` that holds the application file, if any: a project's own package (a
 * Django project's `mysite/mysite/wsgi.py` importing `mysite.settings`) is found only with the
 * folder above it on the import path.
 */
function folderAbove(application: string, name: string): string | undefined {
  for (let dir = dirname(application); dir !== dirname(dir); dir = dirname(dir))
    if (basename(dir) === name) return dir;
  return undefined;
}

/** The bridge's StartFailed payload as the error a start rejects with; `log` takes the traceback. */
export async function startFailure(
  payload: Buffer,
  spec: { readonly mode: string; readonly application: string; readonly executable: string },
  log: (line: string) => void,
): Promise<PythonStartError> {
  const failure = JSON.parse(payload.toString()) as {
    error: string;
    traceback: string;
    python: string;
    executable: string;
  };
  for (const line of failure.traceback.trimEnd().split('\n')) if (line !== '') log(line);
  // A package missing is most often a package installed for another interpreter: say which has it.
  const missing = /^ModuleNotFoundError: No module named '([\w.]+)'/m.exec(failure.error)?.[1];
  let hint = '';
  if (missing !== undefined) {
    const above = folderAbove(spec.application, missing.split('.')[0]!);
    const other =
      above === undefined ? await interpreterWith(missing, failure.executable) : undefined;
    hint =
      above !== undefined
        ? `; "${missing}" is the folder ${above} that holds the application, not a package on the import path: set environmentVariables: { PYTHONPATH: ${dirname(above)} } (a Django project's outer folder)`
        : other
          ? `; ${other} has "${missing}": set pythonExecutable: ${other}`
          : `; install "${missing}" for that interpreter, or set pythonExecutable to one that has it`;
  }
  return new PythonStartError(
    `${spec.mode} application ${spec.application} could not start: ${failure.error}\n` +
      `  (the interpreter was ${failure.executable}, Python ${failure.python}, from pythonExecutable "${spec.executable}"${hint})`,
  );
}
