// Runs the real command line (bin/portico.js over the compiled dist/) as a user would.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const BIN = fileURLToPath(new URL('../../bin/portico.js', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  cwd?: string;
  input?: string;
  env?: NodeJS.ProcessEnv;
  /**
   * Root reads every file whatever its mode; with this, a root run drops that power (the
   * CAP_DAC_* capabilities, through util-linux's setpriv) and meets file modes as users do.
   */
  asUser?: boolean;
}

const AS_ROOT = process.getuid?.() === 0;

export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const command = [process.execPath, BIN, ...args];
    if (options.asUser && AS_ROOT)
      command.unshift('setpriv', '--bounding-set=-dac_override,-dac_read_search', '--');
    const child = spawn(command[0]!, command.slice(1), {
      cwd: options.cwd ?? ROOT,
      env: options.env ?? process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}
