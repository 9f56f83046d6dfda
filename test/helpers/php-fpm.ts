// Debian's php-fpm, started by a test with its own pool on a Unix socket and on TCP, and stopped
// by its process id. A laptop without it skips; CI installs it (.ci/run).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './server.js';
import { until } from './wait.js';

export const FPM = ['php-fpm8.2', 'php-fpm8.3', 'php-fpm8.4', 'php-fpm'].find(
  (p) => spawnSync('sh', ['-c', `command -v ${p}`]).status === 0,
);
if (FPM === undefined && process.env.CI) throw new Error('CI needs php-fpm');

export interface Fpm {
  readonly socket: string;
  readonly port: number;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

/** php-fpm in `base` with `children` static children per pool (unix and tcp). */
export async function startFpm(base: string, maxRequests = 0, children = 4): Promise<Fpm> {
  mkdirSync(base, { recursive: true });
  const port = await freePort();
  const socket = join(base, 'fpm.sock');
  const conf = join(base, 'fpm.conf');
  const pool = (id: string, listen: string) =>
    `[${id}]\nlisten = ${listen}\npm = static\npm.max_children = ${children}\npm.max_requests = ${maxRequests}\ncatch_workers_output = yes\nphp_admin_value[upload_max_filesize] = 32M\nphp_admin_value[post_max_size] = 32M\n`;
  writeFileSync(
    conf,
    `[global]\npid = ${join(base, 'fpm.pid')}\nerror_log = ${join(base, 'fpm.log')}\ndaemonize = no\n` +
      pool('unix', socket) +
      pool('tcp', `127.0.0.1:${port}`),
  );
  // -R: the tests run as root in CI.
  const child = spawn(FPM!, ['-R', '-F', '-y', conf], { stdio: 'ignore' });
  await until(() => existsSync(socket), { what: `php-fpm listening on ${socket}` });
  return {
    socket,
    port,
    child,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGQUIT');
      await once(child, 'exit');
    },
  };
}
