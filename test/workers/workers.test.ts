// `workers: 2` as an operator meets it: a primary and two worker processes sharing the listeners,
// counted together by /status, reloaded together, replaced when one dies, stopped together.
import assert from 'node:assert/strict';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runServing, type ServingCli } from '../helpers/cli.js';
import { request } from '../helpers/http.js';
import { freePort } from '../helpers/server.js';
import { logged, until } from '../helpers/wait.js';

const linux = process.platform === 'linux';
const dir = mkdtempSync(join(tmpdir(), 'portico-workers-'));
for (const name of ['a', 'b']) {
  mkdirSync(join(dir, name));
  writeFileSync(join(dir, name, 'index.html'), `root ${name}`);
}
after(() => rmSync(dir, { recursive: true, force: true }));

interface Status {
  requests_total: number;
  connections_active: number;
  reloads: number;
  listeners: string[];
  workers: { pid: number; requests_total: number; restarts: number; uptime_sec: number }[];
}

interface Rig {
  readonly port: number;
  readonly adminPort: number;
  readonly file: string;
  readonly cli: ServingCli;
  status(): Promise<Status>;
  write(root: string, extra?: string): void;
  /** SIGTERM: exits 0, and no worker is left. */
  stop(): Promise<void>;
}

async function start(extra = ''): Promise<Rig> {
  const [port, adminPort] = [await freePort(), await freePort()];
  const file = join(dir, `portico-${port}.yaml`);
  const write = (root: string, more = extra) =>
    writeFileSync(
      file,
      `global:\n  port: "127.0.0.1:${port}"\n  wwwroot: ${join(dir, root)}\n  workers: 2\n  admin:\n    listen: ${adminPort}\n    status: true\n    runtime: true\n${more}`,
    );
  write('a');
  const cli = await runServing(file);
  const status = async () => JSON.parse((await request(adminPort, '/status')).text) as Status;
  return {
    port,
    adminPort,
    file,
    cli,
    write,
    status,
    stop: async () => {
      const { workers } = await status();
      cli.child.kill('SIGTERM');
      assert.equal(await cli.exited, 0);
      for (const w of workers) await until(() => !alive(w.pid), { what: `worker ${w.pid} gone` });
    },
  };
}

/** `clients` loops of requests on connections of their own until `done`; what each answered. */
function load(port: number, clients: number, done: () => boolean) {
  const answers: string[] = [];
  const failures: string[] = [];
  const loops = Array.from({ length: clients }, async () => {
    while (!done()) {
      try {
        // A connection no worker answers would otherwise hang the test rather than fail it.
        const r = await Promise.race([
          request(port, '/'),
          new Promise<never>((_, reject) =>
            setTimeout(() => reject(new Error('no answer in 10 s')), 10_000).unref(),
          ),
        ]);
        if (r.status === 200) answers.push(r.text);
        else failures.push(`status ${r.status}`);
      } catch (e) {
        failures.push((e as Error).message);
      }
    }
  });
  return { answers, failures, finished: Promise.all(loops) };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('workers: 2', { skip: !linux && 'counts processes through signals on Linux' }, () => {
  it('serves from two processes, and /status and /runtime count them together', async () => {
    const rig = await start();
    assert.match(rig.cli.output(), /\(configuration: .*; 2 worker processes\)/);
    for (let i = 0; i < 40; i++) assert.equal((await request(rig.port, '/')).text, 'root a');
    const status = await rig.status();
    assert.equal(status.workers.length, 2);
    // The /status requests are the admin API's, not the workers'.
    assert.equal(status.requests_total, 40);
    assert.equal(
      status.workers.reduce((sum, w) => sum + w.requests_total, 0),
      40,
    );
    for (const w of status.workers) assert.ok(w.requests_total > 0, `worker ${w.pid} served none`);
    const runtime = JSON.parse((await request(rig.adminPort, '/runtime')).text) as {
      pid: number;
      workers: { pid: number }[];
    };
    assert.deepEqual(
      runtime.workers.map((w) => w.pid).sort(),
      status.workers.map((w) => w.pid).sort(),
    );
    assert.notEqual(runtime.pid, status.workers[0]!.pid);
    await rig.stop();
  });

  it('reloads every worker under load with no failed request, or none when the file is invalid', async () => {
    const rig = await start();
    let stop = false;
    const traffic = load(rig.port, 4, () => stop);
    for (let i = 0; i < 6; i++) {
      rig.write(i % 2 === 0 ? 'b' : 'a');
      const r = await request(rig.adminPort, '/reload', { method: 'POST' });
      assert.equal(r.status, 200, r.text);
    }
    // The last reload served root a; every worker answers with it, on new connections.
    for (let i = 0; i < 10; i++) assert.equal((await request(rig.port, '/')).text, 'root a');
    rig.write('b', '  bogus: 1\n');
    const refused = await request(rig.adminPort, '/reload', { method: 'POST' });
    assert.equal(refused.status, 422);
    for (let i = 0; i < 10; i++) assert.equal((await request(rig.port, '/')).text, 'root a');
    stop = true;
    await traffic.finished;
    assert.deepEqual(traffic.failures, []);
    assert.ok(traffic.answers.length > 0);
    const status = await rig.status();
    assert.equal(status.reloads, 6);
    await rig.stop();
  });

  it('replaces a killed worker while the other keeps serving', async () => {
    const rig = await start();
    const before = await rig.status();
    const victim = before.workers[0]!.pid;
    let stop = false;
    const traffic = load(rig.port, 4, () => stop);
    process.kill(victim, 'SIGKILL');
    await logged(
      rig.cli.output,
      new RegExp(`worker ${victim} was killed by SIGKILL; starting another`),
    );
    await until(async () => (await rig.status()).workers.some((w) => w.restarts === 1), {
      what: 'a replacement worker',
    });
    const served = traffic.answers.length;
    await until(() => traffic.answers.length > served + 20, {
      what: 'requests after the replacement',
    });
    stop = true;
    await traffic.finished;
    // Only what the killed worker had in flight is lost: at most one request per client.
    assert.ok(traffic.failures.length <= 4, traffic.failures.join('\n'));
    const after = await rig.status();
    assert.equal(after.workers.length, 2);
    assert.ok(!after.workers.some((w) => w.pid === victim));
    await rig.stop();
  });

  it('stops under load: requests in flight finish, then every process exits', async () => {
    const rig = await start();
    const { workers } = await rig.status();
    let stop = false;
    const traffic = load(rig.port, 4, () => stop);
    await until(() => traffic.answers.length > 20, { what: 'requests under way' });
    rig.cli.child.kill('SIGTERM');
    assert.equal(await rig.cli.exited, 0);
    stop = true;
    await traffic.finished;
    // After the listeners closed, new connections are refused; none that was answered broke.
    assert.ok(
      traffic.failures.every((f) => /ECONNREFUSED|ECONNRESET|socket hang up/.test(f)),
      traffic.failures.join('\n'),
    );
    for (const w of workers) await until(() => !alive(w.pid), { what: `worker ${w.pid} gone` });
    assert.match(rig.cli.output(), /Portico stopped\n$/);
  });

  it('writes every worker’s access lines whole into one file, and SIGUSR1 reopens it in each', async () => {
    const access = join(dir, 'shared-access.log');
    const rig = await start(`  logFilePath: ${access}\n`);
    await Promise.all(Array.from({ length: 200 }, () => request(rig.port, '/')));
    const lines = () => readFileSync(access, 'utf8').split('\n').filter(Boolean);
    await until(() => lines().length === 200, { what: '200 access lines' });
    for (const line of lines())
      assert.match(line, /^127\.0\.0\.1 - - \[[^\]]+\] "GET \/ HTTP\/1\.1" 200 6 "-" "-"$/);
    renameSync(access, `${access}.1`);
    rig.cli.child.kill('SIGUSR1');
    await logged(rig.cli.output, /logs reopened/);
    assert.ok(existsSync(access));
    await Promise.all(Array.from({ length: 20 }, () => request(rig.port, '/')));
    await until(() => lines().length === 20, { what: '20 lines in the new file' });
    await rig.stop();
  });
});
