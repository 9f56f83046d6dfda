// Gateway processes with `workers: 2` sized for the whole server, not once per worker: wsgid's
// pre-forked Python processes number one per CPU in all, as with one process, and none is left
// once the server has stopped.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runServing, type ServingCli } from '../helpers/cli.js';
import { request } from '../helpers/http.js';
import { freePort } from '../helpers/server.js';
import { until } from '../helpers/wait.js';

const PYTHON = ['/usr/bin/python3', 'python3'].find(
  (candidate) => spawnSync(candidate, ['-c', 'import json'], { stdio: 'ignore' }).status === 0,
);
if (process.env.CI && PYTHON === undefined) throw new Error('CI needs python3 (see .ci/run)');

const dir = mkdtempSync(join(tmpdir(), 'portico-gateways-'));
const started = new Set<ServingCli>();
after(() => {
  started.forEach((cli) => cli.child.kill('SIGKILL'));
  rmSync(dir, { recursive: true, force: true });
});

/** The bridge processes whose command line names `application`. */
function bridges(application: string): number {
  const r = spawnSync('pgrep', ['-f', `portico_bridge.py .* ${application}`], { encoding: 'utf8' });
  return r.stdout.split('\n').filter((l) => l !== '').length;
}

async function serve(
  workers: number,
  application: string,
): Promise<{ port: number; cli: ServingCli }> {
  const port = await freePort();
  const file = join(dir, `portico-${port}.yaml`);
  writeFileSync(
    file,
    `global:\n  port: "127.0.0.1:${port}"\n  workers: ${workers}\n  loadModules: [wsgid]\n  pythonExecutable: ${PYTHON}\n  wsgidApplicationPath: ${application}\n`,
  );
  const cli = await runServing(file);
  started.add(cli);
  return { port, cli };
}

describe('gateway processes with workers', { skip: PYTHON === undefined && 'no python3' }, () => {
  it('runs one wsgid process per CPU in all, whether one worker or two serve', async () => {
    const counts: number[] = [];
    for (const workers of [1, 2]) {
      const application = join(dir, `app${workers}.py`);
      writeFileSync(
        application,
        'def application(environ, start_response):\n    start_response("200 OK", [])\n    return [b"from python"]\n',
      );
      const { port, cli } = await serve(workers, application);
      for (let i = 0; i < 10; i++) assert.equal((await request(port, '/')).text, 'from python');
      counts.push(bridges(application));
      cli.child.kill('SIGTERM');
      assert.equal(await cli.exited, 0);
      await until(() => bridges(application), { ok: (n) => n === 0, what: 'no bridge left' });
    }
    assert.deepEqual(counts, [availableParallelism(), availableParallelism()]);
  });
});
