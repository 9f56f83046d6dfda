// Portico in a process of its own, for the adversarial suite: an attack is judged by what it does
// to the server's process (alive, serving others, descriptors and memory given back), which a
// server sharing the test's process could not show apart from the test's own sockets.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parse, stringify } from 'yaml';
import { NODE_FLAGS } from '../../src/cli/node-flags.js';
import { freePort } from '../helpers/server.js';
import { SERVER_CERT, SERVER_KEY } from '../helpers/tls.js';

const MAIN = resolve(import.meta.dirname, 'portico-main.ts');
// Resolved here: the server runs in its configuration's folder, where no node_modules is.
const TSX = import.meta.resolve('tsx');

/** How long a server process may take to start on a busy machine. */
const START_MS = 30_000;

export interface PorticoProcess {
  readonly pid: number;
  readonly port: number;
  readonly url: string;
  /** With `tls`: the HTTPS port (HTTP/2 by ALPN), its certificate for `localhost` by the test CA. */
  readonly sport: number | undefined;
  /** The configuration's folder: files written beside it are reachable by relative paths. */
  readonly dir: string;
  /** What the server wrote to stderr (its error log) so far. */
  stderr(): string;
  alive(): boolean;
  /** Open file descriptors of the server process. */
  fds(): number;
  /** Resident memory of the server process, in bytes. */
  rss(): number;
  /** SIGTERM, then SIGKILL if it has not exited within `ms`. */
  stop(ms?: number): Promise<void>;
}

export interface SpawnOptions {
  /** Files to create in the configuration's folder before the server starts (`a/b.html` too). */
  readonly files?: Record<string, string | Buffer>;
  readonly env?: NodeJS.ProcessEnv;
  /** An HTTPS listener too (`sport`), with the fixture certificate for localhost. */
  readonly tls?: boolean;
  /** Extra V8 or Node flags for the server process. */
  readonly nodeArgs?: readonly string[];
}

/**
 * Starts Portico from `yaml` (without `global.port`: one on 127.0.0.1 is added) and resolves once
 * it answers; always stop() it.
 */
export async function spawnPortico(
  yaml: string,
  options: SpawnOptions = {},
): Promise<PorticoProcess> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'portico-security-'));
  for (const [name, content] of Object.entries(options.files ?? {})) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), content);
  }
  const doc = (parse(yaml) ?? {}) as { global?: Record<string, unknown> };
  const sport = options.tls ? await freePort() : undefined;
  doc.global = {
    port: `127.0.0.1:${port}`,
    // An attack is judged by the one process it is aimed at: its descriptors and memory.
    workers: 1,
    ...(sport === undefined
      ? {}
      : {
          secure: true,
          sport: `127.0.0.1:${sport}`,
          cert: SERVER_CERT,
          key: SERVER_KEY,
        }),
    ...(doc.global ?? {}),
  };
  const file = join(dir, 'portico.yaml');
  writeFileSync(file, stringify(doc));
  const child: ChildProcess = spawn(
    process.execPath,
    [...NODE_FLAGS, ...(options.nodeArgs ?? []), '--import', TSX, MAIN, 'run', '-c', file],
    { cwd: dir, env: options.env ?? process.env, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let errors = '';
  let serving!: () => void;
  // Started: its start-up line is on stderr.
  const started = new Promise<void>((resolve) => (serving = resolve));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    errors += d;
    if (errors.includes('Portico is serving')) serving();
  });
  let exited = false;
  const exit = once(child, 'exit').then(() => (exited = true));
  const pid = child.pid!;
  const stop = async (ms = 10_000) => {
    if (!exited) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), ms);
      await exit;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<void>((resolve) => (timer = setTimeout(resolve, START_MS)));
  await Promise.race([started, exit, gaveUp]);
  clearTimeout(timer);
  if (!errors.includes('Portico is serving') || exited) {
    const why = exited ? 'exited before serving' : `did not start within ${START_MS} ms`;
    await stop();
    throw new Error(`Portico ${why}:\n${errors}`);
  }
  return {
    pid,
    port,
    url: `http://127.0.0.1:${port}`,
    sport,
    dir,
    stderr: () => errors,
    alive: () => !exited,
    fds: () => readdirSync(`/proc/${pid}/fd`).length,
    rss: () => {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) * 1024;
    },
    stop,
  };
}
