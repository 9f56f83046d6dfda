// The Python the gateway tests run, found the way an operator's would be: Debian's /usr/bin/python3
// (where python3-flask and friends are installed), else the one on the PATH. A laptop without one
// skips those tests; CI must have one (.ci/run installs it).
import { spawnSync } from 'node:child_process';

/** An interpreter that can import `modules` (a comma-separated list), if there is one. */
export function pythonWith(modules: string): string | undefined {
  for (const candidate of ['/usr/bin/python3', 'python3']) {
    const r = spawnSync(candidate, ['-c', `import ${modules}`], { stdio: 'ignore' });
    if (r.status === 0) return candidate;
  }
  return undefined;
}

export const PYTHON = pythonWith('json');
if (process.env.CI && PYTHON === undefined) throw new Error('CI needs python3 (see .ci/run)');

/** The pids of the bridge processes whose command line names `marker` (an application path). */
export function bridges(marker: string): number[] {
  const r = spawnSync('pgrep', ['-f', `portico_bridge.py .* ${marker}`], { encoding: 'utf8' });
  return r.stdout
    .split('\n')
    .filter((l) => l !== '')
    .map(Number);
}
