// A Django-shaped project: the application file inside the project's own package, which imports
// that package by name. Without the project folder on the import path the start fails and says
// what to set; with it in environmentVariables, the application serves.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runCli, runServing } from '../helpers/cli.js';
import { request } from '../helpers/http.js';
import { PYTHON } from '../helpers/python.js';
import { freePort } from '../helpers/server.js';

const dir = mkdtempSync(join(tmpdir(), 'portico-import-path-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const project = join(dir, 'mysite');
mkdirSync(join(project, 'mysite'), { recursive: true });
writeFileSync(join(project, 'mysite', '__init__.py'), '');
writeFileSync(join(project, 'mysite', 'settings.py'), 'GREETING = b"from the project"\n');
writeFileSync(
  join(project, 'mysite', 'wsgi.py'),
  'import mysite.settings\n\ndef application(environ, start_response):\n    start_response("200 OK", [])\n    return [mysite.settings.GREETING]\n',
);

describe(
  'a project package above the application',
  { skip: PYTHON === undefined && 'no python3' },
  () => {
    it('says to put the project folder on PYTHONPATH, and serves once it is', async () => {
      const port = await freePort();
      const file = join(dir, 'portico.yaml');
      const config = (extra: string) =>
        `global:\n  port: "127.0.0.1:${port}"\n  workers: 1\n  loadModules: [wsgi]\n  pythonExecutable: ${PYTHON}\n  wsgiApplicationPath: ${join(project, 'mysite', 'wsgi.py')}\n${extra}`;
      writeFileSync(file, config(''));
      const failed = await runCli(['run', '-c', file]);
      assert.equal(failed.code, 1);
      assert.match(
        failed.stderr,
        new RegExp(
          `"mysite" is the folder ${join(project, 'mysite')} that holds the application, not a package on the import path: set environmentVariables: \\{ PYTHONPATH: ${project} \\}`,
        ),
      );
      writeFileSync(file, config(`  environmentVariables:\n    PYTHONPATH: ${project}\n`));
      const cli = await runServing(file);
      try {
        assert.equal((await request(port, '/')).text, 'from the project');
      } finally {
        cli.child.kill('SIGTERM');
        assert.equal(await cli.exited, 0);
      }
    });
  },
);
