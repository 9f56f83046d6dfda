// An ASGI application that blocks its event loop (time.sleep() in `async def`) on a request given
// up on, with `workers: 2`: the loop reads nothing, yet the bridge's threads see the CANCEL and
// report the process stuck; a new process takes its place for both workers, and none is left once
// the server stops.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runServing, type ServingCli } from '../helpers/cli.js';
import { request } from '../helpers/http.js';
import { connectionPerWorker, via } from '../helpers/worker-connections.js';
import { freePort } from '../helpers/server.js';
import { bridges, PYTHON } from '../helpers/python.js';
import { logged, until } from '../helpers/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'portico-stuck-loop-'));
const started = new Set<ServingCli>();
after(() => {
  started.forEach((cli) => cli.child.kill('SIGKILL'));
  rmSync(dir, { recursive: true, force: true });
});

describe(
  'an asgi process whose loop an application blocks',
  { skip: !PYTHON && 'no python3' },
  () => {
    it('is reported stuck and replaced for both workers', async () => {
      const home = join(dir, 'app');
      mkdirSync(home);
      const application = join(home, 'app.py');
      writeFileSync(
        application,
        [
          'import os, time',
          '',
          'async def application(scope, receive, send):',
          '    if scope["type"] != "http":',
          '        return',
          '    if scope["path"] == "/blocking":',
          '        time.sleep(30)',
          '    await send({"type": "http.response.start", "status": 200, "headers": []})',
          '    await send({"type": "http.response.body", "body": str(os.getpid()).encode()})',
          '',
        ].join('\n'),
      );
      const [port, adminPort] = [await freePort(), await freePort()];
      const file = join(dir, `portico-${port}.yaml`);
      writeFileSync(
        file,
        `global:\n  port: "127.0.0.1:${port}"\n  workers: 2\n  loadModules: [asgi]\n  proxyResponseTimeout: 1000\n  pythonExecutable: ${PYTHON}\n  asgiApplicationPath: ${application}\n  admin:\n    listen: ${adminPort}\n    status: true\n`,
      );
      const cli = await runServing(file);
      started.add(cli);

      const agents = await connectionPerWorker(port, adminPort);
      const stuck = (await via(agents[0]!, port)).text;
      assert.deepEqual(bridges(application), [Number(stuck)]);
      assert.equal((await request(port, '/blocking')).status, 504);
      await logged(
        cli.output,
        new RegExp(`\\(pid ${stuck}\\) did not stop a request it was told to give up`),
      );
      // Both workers reach the process in its place while the old one still sleeps.
      const now = await Promise.all(
        agents.map((agent) =>
          until(() => via(agent, port), {
            ok: (r) => r.status === 200 && r.text !== stuck,
            what: 'an answer from the new process',
          }),
        ),
      );
      const replacement = Number(now[0]!.text);
      assert.deepEqual(
        now.map((r) => r.text),
        [String(replacement), String(replacement)],
      );
      assert.deepEqual(bridges(application).sort(), [Number(stuck), replacement].sort());

      cli.child.kill('SIGTERM');
      assert.equal(await cli.exited, 0);
      for (const agent of agents) agent.destroy();
      await until(() => bridges(application), {
        ok: (pids) => pids.length === 0,
        what: 'no bridge left',
      });
    });
  },
);
