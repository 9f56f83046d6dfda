// Python processes across a reload that changes the module, after a worker was killed and
// replaced, under load: `wsgid` (processes in each worker) reloaded to `wsgi` (one process in the
// primary). Every old process ends; the new one serves; none is left once the server stops.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runServing, type ServingCli } from '../helpers/cli.js';
import { request } from '../helpers/http.js';
import { bridges, PYTHON } from '../helpers/python.js';
import { freePort } from '../helpers/server.js';
import { logged, until } from '../helpers/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'portico-python-reload-'));
let cli: ServingCli | undefined;
after(() => {
  cli?.child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const application = (name: string) => {
  const file = join(dir, `${name}.py`);
  writeFileSync(
    file,
    `import os\ndef application(environ, start_response):\n    start_response("200 OK", [])\n    return [b"${name} %d" % os.getppid()]\n`,
  );
  return file;
};

const parentOf = (pid: number) =>
  Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);

describe(
  'Python processes through a reload after a worker was replaced, under load',
  { skip: PYTHON === undefined && 'python3 is not installed' },
  () => {
    it('wsgid → wsgi: the old processes end, the new one serves, none is left at stop', async () => {
      const [shop, app] = [application('shop'), application('app')];
      const port = await freePort();
      const file = join(dir, 'portico.yaml');
      const config = (mode: string, path: string) =>
        `global:\n  port: "127.0.0.1:${port}"\n  workers: 2\n  shutdownTimeout: 3000\n  pythonExecutable: ${PYTHON}\n  loadModules: [${mode}]\n  ${mode}ApplicationPath: ${path}\n`;
      writeFileSync(file, config('wsgid', shop));
      cli = await runServing(file);
      const perServer = bridges(shop).length;
      assert.ok(perServer >= 2, `wsgid processes: ${perServer}`);

      let done = false;
      const loops = Array.from({ length: 4 }, async () => {
        while (!done) await request(port, '/').catch(() => undefined);
      });
      // A worker killed: its processes go with it, and its replacement starts its own.
      process.kill(parentOf(bridges(shop)[0]!), 'SIGKILL');
      await logged(cli.output, /was killed by SIGKILL; starting another/);
      await until(() => bridges(shop).length, {
        ok: (n) => n === perServer,
        what: 'the replacement’s wsgid processes',
      });

      writeFileSync(file, config('wsgi', app));
      cli.child.kill('SIGHUP');
      await logged(cli.output, /reloaded by SIGHUP/);
      done = true;
      await Promise.all(loops);

      // Both workers serve the new configuration once the reload is announced, the replacement too.
      for (let i = 0; i < 20; i++) assert.match((await request(port, '/')).text, /^app /);
      // The old generation is given shutdownTimeout to finish its requests.
      await until(() => bridges(shop), {
        ok: (pids) => pids.length === 0,
        ms: 10_000,
        what: 'the wsgid processes gone',
      });
      assert.equal(bridges(app).length, 1);

      cli.child.kill('SIGTERM');
      assert.equal(await cli.exited, 0);
      await until(() => bridges(app), {
        ok: (pids) => pids.length === 0,
        what: 'the wsgi process gone',
      });
    });
  },
);
