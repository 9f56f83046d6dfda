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
import { randomBytes, scryptSync } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runServing, type ServingCli } from '../helpers/cli.js';
import { request } from '../helpers/http.js';
import { connectionPerWorker, via } from '../helpers/worker-connections.js';
import { freePort } from '../helpers/server.js';
import { logged, until } from '../helpers/wait.js';

const linux = process.platform === 'linux';
const dir = mkdtempSync(join(tmpdir(), 'portico-workers-'));
for (const name of ['a', 'b']) {
  mkdirSync(join(dir, name));
  writeFileSync(join(dir, name, 'index.html'), `root ${name}`);
}
after(() => rmSync(dir, { recursive: true, force: true }));
// A test that fails half-way leaves no server behind: its launcher killed, the primary stops.
const started = new Set<ServingCli>();
after(() => started.forEach((cli) => cli.child.kill('SIGKILL')));

interface Status {
  requests_total: number;
  connections_active: number;
  reloads: number;
  listeners: string[];
  workers: { pid: number; requests_total: number; restarts: number; uptime_sec: number }[];
  modules?: { cache?: { entries: number }[] };
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
  started.add(cli);
  void cli.exited.then(() => started.delete(cli));
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
    rig.write('b', '  enableHTTP2: 3\n');
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

  it('follows a reload that moves the error log, in the primary and every worker', async () => {
    const [first, second] = [join(dir, 'first-error.log'), join(dir, 'second-error.log')];
    const rig = await start(`  errorLogFilePath: ${first}\n`);
    rig.write('a', `  errorLogFilePath: ${second}\n`);
    assert.equal((await request(rig.adminPort, '/reload', { method: 'POST' })).status, 200);
    // The primary's line of this reload, and a worker's line of a request it refused.
    await logged(() => readFileSync(second, 'utf8'), /reloaded by the admin API/);
    assert.equal((await request(rig.port, '/%zz')).status, 400);
    await logged(() => readFileSync(second, 'utf8'), /URL sanitation error/);
    assert.doesNotMatch(readFileSync(first, 'utf8'), /URL sanitation error/);
    await rig.stop();
  });

  it('retries a replacement that cannot start, with back-off, until it can', async () => {
    const logs = join(dir, 'logs-that-go');
    mkdirSync(logs, { recursive: true });
    const rig = await start(`  logFilePath: ${join(logs, 'access.log')}\n`);
    const [victim] = (await rig.status()).workers;
    rmSync(logs, { recursive: true });
    process.kill(victim!.pid, 'SIGKILL');
    await logged(rig.cli.output, /worker \d+ could not start: .*logs-that-go/);
    // The first failures come within 100 ms, 200 ms, 400 ms…: the same cause is said once.
    await until(async () => (await rig.status()).workers.some((w) => w.restarts >= 3), {
      what: 'three attempts',
    });
    assert.equal(rig.cli.output().match(/could not start/g)?.length, 1);
    mkdirSync(logs);
    const runtime = async () =>
      JSON.parse((await request(rig.adminPort, '/runtime')).text) as {
        pid: number;
        workers: { pid: number; error?: string }[];
      };
    // The next attempt comes after the back-off reached meanwhile (6.4 s after seven failures).
    await until(async () => (await runtime()).workers.every((w) => w.error === undefined), {
      what: 'both workers serving again',
      ms: 30_000,
    });
    // No worker that failed to start is left behind.
    const { pid } = await runtime();
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ');
    assert.equal(children.length, 2);
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

  it('locks out a client after ten failed logins, five through each worker', async () => {
    const salt = randomBytes(16);
    const b64 = (b: Buffer) => b.toString('base64').replace(/=+$/, '');
    const hash = `$scrypt$ln=10,r=8,p=1$${b64(salt)}$${b64(scryptSync('right', salt, 32, { N: 1024, r: 8, p: 1 }))}`;
    const rig = await start(
      `  users: [{ name: alice, pass: "${hash}" }]\n  nonStandardCodes:\n    - scode: 401\n      regex: "^/"\n`,
    );
    const as = (password: string) => ({
      authorization: `Basic ${Buffer.from(`alice:${password}`).toString('base64')}`,
    });
    const [a, b] = await connectionPerWorker(rig.port, rig.adminPort, { headers: as('right') });
    for (let i = 0; i < 5; i++) {
      assert.equal((await via(a!, rig.port, '/', as('wrong'))).status, 401);
      assert.equal((await via(b!, rig.port, '/', as('wrong'))).status, 401);
    }
    // The tenth failure has been counted by the primary and told to both workers.
    for (const agent of [a!, b!])
      await until(async () => (await via(agent, rig.port, '/', as('right'))).status === 429, {
        what: 'the right password refused',
      });
    for (const agent of [a!, b!]) {
      const refused = await via(agent, rig.port, '/', as('right'));
      assert.equal(refused.status, 429);
      assert.ok(Number(refused.headers['retry-after']) > 0);
      agent.destroy();
    }
    await rig.stop();
  });

  it('avoids a backend that failed through one worker in the other too', async () => {
    const dead = await freePort();
    const live = createServer((_, res) => res.end('from the backend'));
    live.listen(0, '127.0.0.1');
    await once(live, 'listening');
    const liveUrl = `http://127.0.0.1:${(live.address() as AddressInfo).port}`;
    const rig = await start(
      `  loadModules: [rproxy]\n  proxyTo: [http://127.0.0.1:${dead}, ${liveUrl}]\n  enableLoadBalancerHealthCheck: true\n  loadBalancerHealthCheckMaximumFails: 1\n  loadBalancerHealthCheckWindow: 60000\n`,
    );
    const [a, b] = await connectionPerWorker(rig.port, rig.adminPort);
    // Each worker picks a backend at random: alone, each would try the dead one until its own
    // count passed the maximum (twice each); sharing the count, the two tries are the server's.
    for (let i = 0; i < 20; i++)
      for (const agent of [a!, b!]) {
        const r = await via(agent, rig.port, `/r${i}`);
        assert.equal(r.status, 200);
        assert.equal(r.text, 'from the backend');
      }
    const retries = rig.cli.output().match(/trying another backend/g)?.length ?? 0;
    assert.equal(retries, 2, rig.cli.output());
    for (const agent of [a!, b!]) agent.destroy();
    await rig.stop();
    live.close();
  });

  it('serves from one worker what the other stored, and drops it in both after a POST', async () => {
    const asked: string[] = [];
    const origin = createServer((req, res) => {
      asked.push(`${req.method} ${req.url}`);
      // The probes that find a connection to each worker are not stored.
      const cacheControl = req.url === '/page' ? 'max-age=60' : 'no-store';
      res.writeHead(200, { 'Cache-Control': cacheControl }).end(`stored ${asked.length}`);
    });
    origin.listen(0, '127.0.0.1');
    await once(origin, 'listening');
    const url = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
    const rig = await start(`  loadModules: [cache, rproxy]\n  proxyTo: ${url}\n`);
    const [a, b] = await connectionPerWorker(rig.port, rig.adminPort);
    const first = await via(a!, rig.port, '/page');
    assert.match(String(first.headers['cache-status']), /fwd=uri-miss; fwd-status=200; stored/);
    // The client may have its answer a moment before the store's write is committed.
    await until(async () => (await rig.status()).modules?.cache?.[0]?.entries, {
      ok: (entries) => entries === 1,
      what: 'the response stored',
    });
    const second = await via(b!, rig.port, '/page');
    assert.match(String(second.headers['cache-status']), /^Portico; hit; ttl=/);
    assert.equal(second.text, first.text);
    assert.deepEqual(
      asked.filter((line) => line.endsWith('/page')),
      ['GET /page'],
    );
    // An unsafe request through one worker invalidates the URL for both (RFC 9111 §4.4).
    assert.equal((await via(b!, rig.port, '/page', {}, 'POST')).status, 200);
    const after = await via(a!, rig.port, '/page');
    assert.match(String(after.headers['cache-status']), /fwd=uri-miss/);
    assert.notEqual(after.text, first.text);
    for (const agent of [a!, b!]) agent.destroy();
    await rig.stop();
    origin.close();
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
