// What `validate` checks that `run` would otherwise find only as it starts: interpreters that
// cannot run, and with `--apps` the Python applications themselves, imported as `run` imports them
// and stopped again.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runCli } from '../helpers/cli.js';

const python = spawnSync('python3', ['--version']).status === 0;
if (!python && process.env.CI) throw new Error('CI needs python3');

const dir = mkdtempSync(join(tmpdir(), 'portico-validate-apps-'));
after(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(
  join(dir, 'good.py'),
  'def application(environ, start_response):\n    start_response("200 OK", [])\n    return [b"ok"]\n',
);
writeFileSync(join(dir, 'broken.py'), 'import no_such_module_here\napplication = None\n');

function config(name: string, body: string): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, body);
  return file;
}

/** Processes whose command line names this test's folder (a bridge left running). */
function processesHere(): number {
  let n = 0;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p)))
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir)) n++;
    } catch {
      // gone meanwhile
    }
  return n;
}

describe(
  'validate: interpreters, and --apps',
  { skip: !python && 'python3 is not installed' },
  () => {
    it('--apps imports each application as run does: a missing module fails it, with the module named', async () => {
      const broken = config(
        'broken',
        `global:\n  loadModules: [wsgi]\n  wsgiApplicationPath: ${join(dir, 'broken.py')}\n`,
      );
      const plain = await runCli(['validate', '-c', broken]);
      assert.equal(plain.code, 0, plain.stderr);
      const apps = await runCli(['validate', '--apps', '-c', broken]);
      assert.equal(apps.code, 1);
      assert.match(apps.stderr, /no_such_module_here/);
      assert.doesNotMatch(apps.stdout, /configuration OK/);
    });

    it('--apps with applications that start: OK, and no process left behind', async () => {
      const good = config(
        'good',
        `global:\n  loadModules: [wsgi, wsgid]\nhosts:\n  - domain: a.test\n    wsgiApplicationPath: ${join(dir, 'good.py')}\n  - domain: b.test\n    wsgidApplicationPath: ${join(dir, 'good.py')}\n`,
      );
      const r = await runCli(['validate', '--apps', '-c', good]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /configuration OK/);
      assert.equal(processesHere(), 0);
    });

    it('a pythonExecutable that cannot run is an error at its position; a missing CGI interpreter a warning', async () => {
      const file = config(
        'interpreters',
        `global:\n  loadModules: [wsgi, cgi]\n  wwwroot: ${dir}\n  pythonExecutable: /nonexistent/python3\n` +
          `  cgiScriptExtensions: [.xyz]\n  cgiScriptInterpreters:\n    .xyz: [no-such-interpreter-here]\n` +
          `hosts:\n  - domain: a.test\n    wsgiApplicationPath: ${join(dir, 'good.py')}\n`,
      );
      const r = await runCli(['validate', '-c', file]);
      assert.equal(r.code, 1);
      assert.match(
        r.stderr,
        /interpreters\.yaml:4:\d+: global\.pythonExecutable: \/nonexistent\/python3: not an executable file/,
      );
      assert.match(
        r.stderr,
        /warning: global\.cgiScriptExtensions: no-such-interpreter-here: not found on the PATH/,
      );
    });

    it('--apps is only for validate', async () => {
      const r = await runCli(['run', '--apps']);
      assert.equal(r.code, 2);
      assert.match(r.stderr, /--apps is for validate/);
    });
  },
);
