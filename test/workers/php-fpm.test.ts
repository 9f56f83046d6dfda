// php-fpm behind `workers: 2`: its children serve every worker, so Portico sizes its FastCGI
// bounds for the whole server. More requests at once than php-fpm has children, through the
// workers, all answered; php-fpm keeps its own number of processes whatever Portico runs.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runServing, type ServingCli } from '../helpers/cli.js';
import { request } from '../helpers/http.js';
import { FPM, startFpm } from '../helpers/php-fpm.js';
import { freePort } from '../helpers/server.js';
import { until } from '../helpers/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'portico-workers-fpm-'));
const www = join(dir, 'www');
mkdirSync(www);
// The script's own 100 ms of work, so that requests overlap.
writeFileSync(join(www, 'slow.php'), `<?php usleep(100000); echo getmypid();`);
const started = new Set<ServingCli>();
after(() => {
  started.forEach((cli) => cli.child.kill('SIGKILL'));
  rmSync(dir, { recursive: true, force: true });
});

/** php-fpm's processes: its master and the children of `pid`. */
const fpmProcesses = (pid: number) =>
  1 +
  spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
    .stdout.trim()
    .split('\n').length;

describe(
  'php-fpm with workers: 2',
  { skip: FPM === undefined && 'php-fpm is not installed' },
  () => {
    it('answers more requests at once than php-fpm has children, php-fpm unchanged', async (t) => {
      const fpm = await startFpm(join(dir, 'fpm'), 0, 2);
      t.after(() => fpm.stop());
      // Two pools (unix, tcp) of two static children each, forked once php-fpm listens.
      const before = await until(() => fpmProcesses(fpm.child.pid!), {
        ok: (n) => n === 5,
        what: 'php-fpm’s master and four children',
      });
      const [port, adminPort] = [await freePort(), await freePort()];
      const file = join(dir, 'portico.yaml');
      writeFileSync(
        file,
        `global:\n  port: "127.0.0.1:${port}"\n  wwwroot: ${www}\n  workers: 2\n  loadModules: [fcgi]\n  fcgiTo: unix://${fpm.socket}\n  fcgiPath: /\n  admin:\n    listen: ${adminPort}\n    status: true\n`,
      );
      const cli = await runServing(file);
      started.add(cli);
      const answers = await Promise.all(
        Array.from({ length: 24 }, () => request(port, '/slow.php')),
      );
      for (const r of answers) assert.match(`${r.status} ${r.text}`, /^200 \d+$/);
      // Both of php-fpm's children of the unix pool answered, and no other process did.
      assert.equal(new Set(answers.map((r) => r.text)).size, 2);
      const status = JSON.parse((await request(adminPort, '/status')).text) as {
        workers: { requests_total: number }[];
      };
      assert.ok(
        status.workers.every((w) => w.requests_total > 0),
        'each worker served some',
      );
      assert.equal(fpmProcesses(fpm.child.pid!), before);
      cli.child.kill('SIGTERM');
      assert.equal(await cli.exited, 0);
    });
  },
);
