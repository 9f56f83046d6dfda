// Runs the command line: the real one (bin/portico.js over the compiled dist/) as a user would, or
// its main() from the sources in this process, which costs no process start for each case.
import { spawn, type ChildProcess } from 'node:child_process';
import { PassThrough, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { CommandIo } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';

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

export interface ServingCli {
  readonly child: ChildProcess;
  /** Its standard output and error so far, interleaved. */
  output(): string;
  /** Its exit status, once it exits. */
  readonly exited: Promise<number | null>;
}

/** How long `portico run` may take to start on a busy machine. */
const START_MS = 30_000;

/** `portico run -c FILE` of the real command line, resolved once it says it is serving. */
export function runServing(
  file: string,
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<ServingCli> {
  const child = spawn(process.execPath, [BIN, 'run', '-c', file], {
    cwd: options.cwd ?? ROOT,
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`not serving after ${START_MS} ms: ${out}`));
    }, START_MS);
    const onData = (d: Buffer) => {
      out += d.toString();
      if (!/Portico is serving/.test(out)) return;
      clearTimeout(timer);
      resolve({ child, output: () => out, exited });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited ${code}: ${out}`));
    });
  });
}

/**
 * main(`args`) in this process, run in `cwd` as the command would be, with its output captured.
 * Commands that read stdin, start servers or exit the process need runCli.
 */
export async function runMain(args: string[], options: { cwd?: string } = {}): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  // Written through at once, so the output is whole when main() returns.
  const sink = (append: (text: string) => void) =>
    new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        append(chunk.toString());
        done();
      },
    });
  const io: CommandIo = {
    stdin: new PassThrough() as unknown as NodeJS.ReadStream,
    stdout: sink((d: string) => (stdout += d)),
    stderr: sink((d: string) => (stderr += d)),
  };
  const cwd = process.cwd();
  process.chdir(options.cwd ?? ROOT);
  try {
    const code = await main(args, io);
    return { code, stdout, stderr };
  } finally {
    process.chdir(cwd);
  }
}
