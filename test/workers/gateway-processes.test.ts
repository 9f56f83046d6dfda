// Gateway processes with `workers: 2` sized for the whole server, not once per worker: wsgid's
// pre-forked Python processes number one per CPU in all, as with one process; a wsgi or asgi
// application has one process, the primary's, serving both workers through reloads, a kill and a
// request it does not stop (an asgi one blocking its own loop too), with its lifespan run once; and
// none is left once the server stops.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runServing, type ServingCli } from '../helpers/cli.js';
import { request } from '../helpers/http.js';
import { connectionPerWorker, via } from '../helpers/worker-connections.js';
import { freePort } from '../helpers/server.js';
import { bridges, PYTHON } from '../helpers/python.js';
import { logged, until } from '../helpers/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'portico-gateways-'));
const started = new Set<ServingCli>();
after(() => {
  started.forEach((cli) => cli.child.kill('SIGKILL'));
  rmSync(dir, { recursive: true, force: true });
});

async function serve(
  workers: number,
  application: string,
  mode: 'wsgi' | 'wsgid' | 'asgi' = 'wsgid',
): Promise<{ port: number; adminPort: number; cli: ServingCli }> {
  const [port, adminPort] = [await freePort(), await freePort()];
  const file = join(dir, `portico-${port}.yaml`);
  writeFileSync(
    file,
    `global:\n  port: "127.0.0.1:${port}"\n  workers: ${workers}\n  loadModules: [${mode}]\n  pythonExecutable: ${PYTHON}\n  ${mode}ApplicationPath: ${application}\n  admin:\n    listen: ${adminPort}\n    status: true\n`,
  );
  const cli = await runServing(file);
  started.add(cli);
  return { port, adminPort, cli };
}

/** `clients` loops of requests until `done`; the failures among them. */
function load(port: number, clients: number, done: () => boolean) {
  const failures: string[] = [];
  const loops = Array.from({ length: clients }, async () => {
    while (!done()) {
      const r = await request(port, '/').catch((e: Error) => ({ status: 0, text: e.message }));
      if (r.status !== 200) failures.push(`${r.status} ${r.text}`);
    }
  });
  return { failures, finished: Promise.all(loops) };
}

/** The application of `mode` answering `version` and its pid; an ASGI one notes its lifespan. */
function writeApplication(file: string, mode: 'wsgi' | 'asgi', version: string): void {
  const wsgi = [
    'import os',
    '',
    'def application(environ, start_response):',
    '    start_response("200 OK", [("content-type", "text/plain")])',
    `    return [b"${version} %d" % os.getpid()]`,
  ];
  const asgi = [
    'import os',
    '',
    'LOG = os.path.join(os.path.dirname(__file__), "lifespan.log")',
    '',
    'def note(what):',
    '    with open(LOG, "a") as f:',
    `        f.write(f"{what} ${version} {os.getpid()}\\n")`,
    '',
    'async def application(scope, receive, send):',
    '    if scope["type"] == "lifespan":',
    '        while True:',
    '            message = await receive()',
    '            if message["type"] == "lifespan.startup":',
    '                note("startup")',
    '                await send({"type": "lifespan.startup.complete"})',
    '            else:',
    '                note("shutdown")',
    '                await send({"type": "lifespan.shutdown.complete"})',
    '                return',
    '    await receive()',
    '    await send({"type": "http.response.start", "status": 200, "headers": []})',
    `    await send({"type": "http.response.body", "body": b"${version} %d" % os.getpid()})`,
  ];
  writeFileSync(file, `${(mode === 'wsgi' ? wsgi : asgi).join('\n')}\n`);
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
      counts.push(bridges(application).length);
      cli.child.kill('SIGTERM');
      assert.equal(await cli.exited, 0);
      await until(() => bridges(application).length, {
        ok: (n) => n === 0,
        what: 'no bridge left',
      });
    }
    assert.deepEqual(counts, [availableParallelism(), availableParallelism()]);
  });
});

describe(
  'one wsgi or asgi process for all workers',
  { skip: PYTHON === undefined && 'no python3' },
  () => {
    for (const mode of ['wsgi', 'asgi'] as const) {
      it(`${mode}: one process serves both workers, through a reload, a kill and a stop`, async () => {
        const home = join(dir, `${mode}-app`);
        mkdirSync(home);
        const application = join(home, 'app.py');
        const lifespan = () =>
          readFileSync(join(home, 'lifespan.log'), 'utf8')
            .split('\n')
            .filter((l) => l !== '');
        writeApplication(application, mode, 'v1');

        // One worker: one process, as before.
        const single = await serve(1, application, mode);
        assert.match((await request(single.port, '/')).text, /^v1 \d+$/);
        assert.equal(bridges(application).length, 1);
        single.cli.child.kill('SIGTERM');
        assert.equal(await single.cli.exited, 0);
        await until(() => bridges(application).length, {
          ok: (n) => n === 0,
          what: 'no bridge left',
        });
        if (mode === 'asgi') rmSync(join(home, 'lifespan.log'));

        const { port, adminPort, cli } = await serve(2, application, mode);
        const agents = await connectionPerWorker(port, adminPort);
        const answers = await Promise.all(agents.map((agent) => via(agent, port)));
        const pid = /^v1 (\d+)$/.exec(answers[0]!.text)?.[1];
        assert.ok(pid, answers[0]!.text);
        assert.deepEqual(
          answers.map((a) => a.text),
          [`v1 ${pid}`, `v1 ${pid}`],
        );
        assert.equal(bridges(application).length, 1);
        if (mode === 'asgi') assert.deepEqual(lifespan(), [`startup v1 ${pid}`]);

        // A reload under load runs the new code, with no failed request and one process after it.
        let stop = false;
        const traffic = load(port, 3, () => stop);
        writeApplication(application, mode, 'v2');
        const reloads = (cli.output().match(/reloaded by SIGHUP/g) ?? []).length;
        cli.child.kill('SIGHUP');
        await until(() => (cli.output().match(/reloaded by SIGHUP/g) ?? []).length, {
          ok: (n) => n > reloads,
          what: 'the reload',
        });
        stop = true;
        await traffic.finished;
        assert.deepEqual(traffic.failures, []);
        for (const agent of agents) assert.match((await via(agent, port)).text, /^v2 \d+$/);
        await until(() => bridges(application).length, {
          ok: (n) => n === 1,
          what: 'the old process gone',
        });
        const reloaded = /^v2 (\d+)$/.exec((await request(port, '/')).text)![1]!;
        if (mode === 'asgi')
          await until(lifespan, {
            ok: (lines) =>
              lines.join() ===
              [`startup v1 ${pid}`, `startup v2 ${reloaded}`, `shutdown v1 ${pid}`].join(),
            what: 'the new lifespan started once, the old one shut down',
          });

        // A process killed is replaced, and both workers reach the new one.
        process.kill(Number(reloaded), 'SIGKILL');
        await logged(cli.output, new RegExp(`\\(pid ${reloaded}\\) was ended by SIGKILL`));
        const replaced = new Set<string>();
        for (const agent of agents) {
          const r = await until(() => via(agent, port), {
            ok: (r) => r.status === 200 && r.text !== `v2 ${reloaded}`,
            what: 'an answer from the new process',
          });
          replaced.add(r.text);
        }
        assert.equal(replaced.size, 1);
        assert.equal(bridges(application).length, 1);

        cli.child.kill('SIGTERM');
        assert.equal(await cli.exited, 0);
        for (const agent of agents) agent.destroy();
        await until(() => bridges(application).length, {
          ok: (n) => n === 0,
          what: 'no bridge left',
        });
        // The killed process had no shutdown; its replacement started and shut down once.
        const [, again] = /^v2 (\d+)$/.exec([...replaced][0]!)!;
        if (mode === 'asgi')
          assert.deepEqual(lifespan().slice(3), [`startup v2 ${again}`, `shutdown v2 ${again}`]);
      });
    }
  },
);

/**
 * `workers: 2` serving each of `apps` (module → Python source) at `/module`, with a 1 s response
 * limit so that a request hung in the application is given up on soon.
 */
async function serveHanging(name: string, apps: Partial<Record<'wsgi' | 'asgi', string>>) {
  const home = join(dir, name);
  mkdirSync(home);
  const modes = Object.keys(apps) as ('wsgi' | 'asgi')[];
  for (const mode of modes) writeFileSync(join(home, `${mode}_app.py`), apps[mode]!);
  const [port, adminPort] = [await freePort(), await freePort()];
  const file = join(dir, `portico-${port}.yaml`);
  writeFileSync(
    file,
    `global:\n  port: "127.0.0.1:${port}"\n  workers: 2\n  loadModules: [${modes.join(', ')}]\n  proxyResponseTimeout: 1000\n  pythonExecutable: ${PYTHON}\n` +
      modes
        .map((m) => `  ${m}ApplicationPath: ${join(home, `${m}_app.py`)}\n  ${m}Path: /${m}\n`)
        .join('') +
      `  admin:\n    listen: ${adminPort}\n    status: true\n`,
  );
  const cli = await runServing(file);
  started.add(cli);
  return { home, port, adminPort, cli };
}

describe(
  'a stuck process shared by the workers',
  { skip: PYTHON === undefined && 'no python3' },
  () => {
    // The loop reads nothing while the application sleeps in `async def`, yet the bridge's threads
    // see the CANCEL and report the process stuck.
    it('replaces an asgi process whose loop the application blocks, for both workers', async () => {
      const { home, port, adminPort, cli } = await serveHanging('blocked-loop', {
        asgi: [
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
      });
      const application = join(home, 'asgi_app.py');
      const agents = await connectionPerWorker(port, adminPort, { path: '/asgi/' });
      const stuck = (await via(agents[0]!, port, '/asgi/')).text;
      assert.deepEqual(bridges(application), [Number(stuck)]);
      assert.equal((await request(port, '/asgi/blocking')).status, 504);
      await logged(
        cli.output,
        new RegExp(`\\(pid ${stuck}\\) did not stop a request it was told to give up`),
      );
      // Both workers reach the process in its place while the old one still sleeps.
      const now = await Promise.all(
        agents.map((agent) =>
          until(() => via(agent, port, '/asgi/'), {
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

    it('replaces a wsgi or asgi process that does not stop a request it was told to give up', async () => {
      // Hung where no cancellation reaches: a thread blocked for ever, a task nothing cancels.
      const { home, port, adminPort, cli } = await serveHanging('stuck', {
        wsgi: [
          'import os, threading',
          '',
          'def application(environ, start_response):',
          '    if environ["PATH_INFO"] == "/silent":',
          '        with open(os.path.join(os.path.dirname(__file__), "wsgi.entered"), "a") as f:',
          '            f.write("x")',
          '        threading.Event().wait()',
          '    start_response("200 OK", [])',
          '    return [str(os.getpid()).encode()]',
          '',
        ].join('\n'),
        asgi: [
          'import asyncio, os',
          '',
          'async def application(scope, receive, send):',
          '    if scope["type"] != "http":',
          '        return',
          '    if scope["path"] == "/silent":',
          '        with open(os.path.join(os.path.dirname(__file__), "asgi.entered"), "a") as f:',
          '            f.write("x")',
          '        await asyncio.Event().wait()',
          '    await send({"type": "http.response.start", "status": 200, "headers": []})',
          '    await send({"type": "http.response.body", "body": str(os.getpid()).encode()})',
          '',
        ].join('\n'),
      });
      for (const mode of ['wsgi', 'asgi']) {
        const application = join(home, `${mode}_app.py`);
        const agents = await connectionPerWorker(port, adminPort, { path: `/${mode}/` });
        const stuck = (await via(agents[0]!, port, `/${mode}/`)).text;
        assert.equal((await request(port, `/${mode}/silent`)).status, 504);
        await logged(
          cli.output,
          new RegExp(`\\(pid ${stuck}\\) did not stop a request it was told to give up`),
        );
        // Both workers reach the process in its place, and it ends once both have left it.
        const now = await Promise.all(
          agents.map((agent) =>
            until(() => via(agent, port, `/${mode}/`), {
              ok: (r) => r.status === 200 && r.text !== stuck,
              what: 'an answer from the new process',
            }),
          ),
        );
        assert.equal(new Set(now.map((r) => r.text)).size, 1);
        await until(() => bridges(application).length, {
          ok: (n) => n === 1,
          what: 'the stuck one gone',
        });
        // A client that leaves before the time limit: the request is still given up on when it
        // runs out, and the process that does not stop it is replaced too.
        const second = now[0]!.text;
        const client = connect(port, '127.0.0.1');
        client.on('error', () => undefined);
        client.write(`GET /${mode}/silent HTTP/1.1\r\nHost: x\r\n\r\n`);
        const entered = join(home, `${mode}.entered`);
        await until(() => readFileSync(entered, 'utf8').length, {
          ok: (n) => n === 2,
          what: 'the request in the application',
        });
        client.destroy();
        await logged(
          cli.output,
          new RegExp(`\\(pid ${second}\\) did not stop a request it was told to give up`),
        );
        await until(() => via(agents[0]!, port, `/${mode}/`), {
          ok: (r) => r.status === 200 && r.text !== second && r.text !== stuck,
          what: 'an answer from a third process',
        });
        for (const agent of agents) agent.destroy();
      }
      cli.child.kill('SIGTERM');
      assert.equal(await cli.exited, 0);
      await until(() => bridges(join(home, '')).length, {
        ok: (n) => n === 0,
        what: 'no bridge left',
      });
    });
  },
);
