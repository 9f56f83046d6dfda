// `portico run` as an operator meets it: start, serve, logs, log rotation, time limits, graceful
// shutdown, bind failures, and no handle left behind.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { once } from 'node:events';
import { BIN, ROOT, runServing, type ServingCli } from '../helpers/cli.js';
import { heldResponse, isRefused, raw, request } from '../helpers/http.js';
import { freePort, startServer } from '../helpers/server.js';
import { logged, until } from '../helpers/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'portico-lifecycle-'));
const www = join(dir, 'www');
mkdirSync(www);
writeFileSync(join(www, 'index.html'), 'hello');
writeFileSync(join(www, 'big.bin'), Buffer.alloc(32 * 1024 * 1024, 7));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Writes `config` to `name` and starts `portico run` on it. */
// A test that fails half-way leaves no server behind: its launcher killed, the server stops.
const started = new Set<ServingCli>();
after(() => started.forEach((cli) => cli.child.kill('SIGKILL')));

async function run(config: string, name = 'portico.yaml'): Promise<ServingCli> {
  const file = join(dir, name);
  writeFileSync(file, config);
  const cli = await runServing(file, { cwd: dir });
  started.add(cli);
  void cli.exited.then(() => started.delete(cli));
  return cli;
}

describe('portico run', () => {
  it('serves, writes the access and error logs, reopens them on SIGUSR1, and stops on SIGTERM with 0', async () => {
    const port = await freePort();
    const access = join(dir, 'access.log');
    const errorLog = join(dir, 'error.log');
    const p = await run(
      `global:\n  port: "127.0.0.1:${port}"\n  wwwroot: ${www}\n  logFilePath: ${access}\n  errorLogFilePath: ${errorLog}\n`,
    );
    const r = await request(port, '/index.html?x="1"', {
      headers: { 'user-agent': 'test "agent"', referer: 'http://ref.test/' },
    });
    assert.equal(r.text, 'hello');
    await request(port, '/%zz');
    // Both logs are written on their next flush.
    const lines = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean);
    await until(() => lines(access).length === 2, { what: 'two access log lines' });
    await logged(() => readFileSync(errorLog, 'utf8'), /URL sanitation error/);
    const line = lines(access)[0]!;
    assert.match(
      line,
      /^127\.0\.0\.1 - - \[\d{2}\/[A-Z][a-z]{2}\/\d{4}:\d{2}:\d{2}:\d{2} [+-]\d{4}\] "GET \/index\.html\?x=\\"1\\" HTTP\/1\.1" 200 5 "http:\/\/ref\.test\/" "test \\"agent\\""$/,
    );
    assert.match(
      readFileSync(errorLog, 'utf8'),
      /^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\]: Portico is serving http:\/\/127\.0\.0\.1:\d+/,
    );
    assert.match(readFileSync(errorLog, 'utf8'), /URL sanitation error/);

    renameSync(access, `${access}.1`);
    p.child.kill('SIGUSR1');
    await logged(() => readFileSync(errorLog, 'utf8'), /logs reopened/);
    assert.ok(existsSync(access), 'a new access log was opened');
    await request(port, '/');
    await logged(() => readFileSync(access, 'utf8'), /"GET \/ HTTP\/1\.1" 200/);
    assert.equal(lines(`${access}.1`).length, 2);

    p.child.kill('SIGTERM');
    assert.equal(await p.exited, 0);
  });

  it('reloads on SIGHUP, and keeps serving when the new file is invalid', async () => {
    const port = await freePort();
    const other = join(dir, 'other');
    mkdirSync(other, { recursive: true });
    writeFileSync(join(other, 'index.html'), 'reloaded');
    const p = await run(`global:\n  port: "127.0.0.1:${port}"\n  wwwroot: ${www}\n`, 'reload.yaml');
    assert.equal((await request(port, '/')).text, 'hello');
    writeFileSync(
      join(dir, 'reload.yaml'),
      `global:\n  port: "127.0.0.1:${port}"\n  wwwroot: ${other}\n`,
    );
    p.child.kill('SIGHUP');
    await logged(p.output, /reloaded by SIGHUP/);
    assert.equal((await request(port, '/')).text, 'reloaded');
    writeFileSync(join(dir, 'reload.yaml'), `global:\n  port: 0\n`);
    p.child.kill('SIGHUP');
    await logged(p.output, /reload by SIGHUP .* refused/);
    assert.equal((await request(port, '/')).text, 'reloaded');
    assert.match(p.output(), /reload: .*reload\.yaml:2:9: global\.port: 0 is out of range/);
    assert.match(p.output(), /reload by SIGHUP .* refused \(invalid configuration\)/);
    p.child.kill('SIGINT');
    assert.equal(await p.exited, 0);
  });

  it('names the admin API at start, logs an admin reload as a SIGHUP one, and at stop the connections it cut and a last line', async () => {
    const port = await freePort();
    const adminPort = await freePort();
    const config = (root: string, extra = '') =>
      `global:\n  port: "127.0.0.1:${port}"\n  wwwroot: ${root}\n  shutdownTimeout: 500\n  admin:\n    listen: ${adminPort}\n${extra}`;
    const p = await run(config(www), 'admin-log.yaml');
    assert.match(
      p.output(),
      new RegExp(
        `Portico is serving http://127\\.0\\.0\\.1:${port}; admin API on http://127\\.0\\.0\\.1:${adminPort} \\(configuration: `,
      ),
    );
    const reload = async (by: 'SIGHUP' | 'the admin API') => {
      if (by === 'SIGHUP') p.child.kill('SIGHUP');
      else await request(adminPort, '/reload', { method: 'POST' });
    };
    for (const by of ['SIGHUP', 'the admin API'] as const) {
      writeFileSync(join(dir, 'admin-log.yaml'), config(www, '  enableHTTP2: 3\n'));
      await reload(by);
      await logged(
        p.output,
        new RegExp(
          `reload: .*admin-log\\.yaml:7:16: global\\.enableHTTP2: expected a boolean, got 3`,
        ),
      );
      await logged(
        p.output,
        new RegExp(
          `reload by ${by} \\(.*admin-log\\.yaml\\) refused \\(invalid configuration\\); the running configuration keeps serving`,
        ),
      );
      writeFileSync(join(dir, 'admin-log.yaml'), config(www));
      await reload(by);
      await logged(
        p.output,
        new RegExp(`reloaded by ${by} \\(.*admin-log\\.yaml\\); serving http://127`),
      );
    }
    // A download that outlives shutdownTimeout: the client reads nothing, so it cannot finish.
    const socket = connect(port, '127.0.0.1');
    socket.write('GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n');
    socket.on('error', () => undefined);
    // In flight once its first bytes arrive; then it stops reading.
    await once(socket, 'data');
    socket.pause();
    p.child.kill('SIGTERM');
    assert.equal(await p.exited, 0);
    assert.match(
      p.output(),
      /shutdownTimeout \(500 ms\) passed: 1 connection with requests in flight closed\n.*Portico stopped\n$/s,
    );
    socket.destroy();
  });

  it('starts with a property it does not know, as Ferron 1.x does, saying which and what was meant', async () => {
    const port = await freePort();
    // As in a public Ferron configuration: a misspelt property and a top-level `host:`.
    const p = await run(
      `global:\n  port: "127.0.0.1:${port}"\n  wwwroot: ${www}\n  disableNonEncrytedServer: true\nhost:\n  - domain: example.org\n`,
      'misspelt.yaml',
    );
    assert.match(
      p.output(),
      /misspelt\.yaml:4:3: warning: global\.disableNonEncrytedServer: unknown property, ignored; did you mean "disableNonEncryptedServer"\?/,
    );
    assert.match(p.output(), /misspelt\.yaml:5:1: warning: host: unknown top-level key, ignored/);
    assert.equal((await request(port, '/')).status, 200);
    p.child.kill('SIGTERM');
    assert.equal(await p.exited, 0);
  });

  it('exits 1 naming the address when the port is taken, and on an invalid configuration', async () => {
    const port = await freePort();
    const a = await run(`global:\n  port: "127.0.0.1:${port}"\n  wwwroot: ${www}\n`, 'a.yaml');
    writeFileSync(join(dir, 'b.yaml'), `global:\n  port: "127.0.0.1:${port}"\n`);
    const b = spawnSync(process.execPath, [BIN, 'run', '-c', join(dir, 'b.yaml')], {
      encoding: 'utf8',
    });
    assert.equal(b.status, 1);
    assert.equal(
      b.stderr,
      `portico run: cannot listen on http://127.0.0.1:${port}: the address is already in use (another server is listening there)\n`,
    );
    a.child.kill('SIGTERM');
    assert.equal(await a.exited, 0);
    writeFileSync(join(dir, 'c.yaml'), 'global:\n  port: 99999\n');
    const c = spawnSync(process.execPath, [BIN, 'run', '-c', join(dir, 'c.yaml')], {
      encoding: 'utf8',
    });
    assert.equal(c.status, 1);
    assert.match(c.stderr, /c\.yaml:2:9: global\.port: 99999 is out of range/);
  });

  it('npm start’s configuration serves the welcome page', async () => {
    const port = await freePort();
    const yaml = readFileSync(join(ROOT, 'portico.yaml'), 'utf8').replace(
      'port: "127.0.0.1:8080"',
      `port: "127.0.0.1:${port}"`,
    );
    writeFileSync(
      join(dir, 'welcome.yaml'),
      yaml.replace('wwwroot: wwwroot', `wwwroot: ${join(ROOT, 'wwwroot')}`),
    );
    const p = await run(readFileSync(join(dir, 'welcome.yaml'), 'utf8'), 'welcome.yaml');
    const r = await fetch(`http://127.0.0.1:${port}/`);
    assert.equal(r.status, 200);
    assert.match(await r.text(), /<title>Portico is running<\/title>/);
    assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
    p.child.kill('SIGTERM');
    assert.equal(await p.exited, 0);
  });
});

describe('time limits', () => {
  it('closes a connection whose headers do not arrive in time (slowloris)', async () => {
    const s = await startServer(`global:\n  wwwroot: ${www}\n`, {
      limits: {
        headersTimeoutMs: 400,
        requestTimeoutMs: 1000,
        keepAliveTimeoutMs: 500,
        checkIntervalMs: 100,
      },
    });
    try {
      const started = Date.now();
      const reply = await raw(s.port, 'GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ', 5000);
      assert.ok(Date.now() - started < 2500, 'closed by the server, not by the test');
      assert.match(reply, /^HTTP\/1\.1 408 Request Timeout\r\n/);
    } finally {
      await s.close();
    }
  });

  it('resets a request whose processing exceeds `timeout`', async (t) => {
    // A backend that never answers keeps the request in processing.
    const silent = createHttpServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    t.after(() => {
      silent.closeAllConnections();
      silent.close();
    });
    const port = (silent.address() as AddressInfo).port;
    const s = await startServer(
      `global:\n  wwwroot: ${www}\n  timeout: 300\n  loadModules: [rproxy]\nhosts:\n  - domain: localhost\n    locations:\n      - path: /stuck\n        proxyTo: http://127.0.0.1:${port}\n`,
    );
    try {
      const started = Date.now();
      await assert.rejects(
        request(s.port, '/stuck', { headers: { host: 'localhost' } }),
        /socket hang up|ECONNRESET/,
      );
      assert.ok(Date.now() - started < 2000);
      assert.equal((await request(s.port, '/')).text, 'hello', 'the server goes on serving');
    } finally {
      await s.close();
    }
  });
});

/** The active resources (handles, requests, timers) not in `before`, counted by kind. */
function opened(before: readonly string[]): string[] {
  const kept = [...before];
  return process.getActiveResourcesInfo().filter((kind) => {
    const i = kept.indexOf(kind);
    if (i >= 0) kept.splice(i, 1);
    return i < 0;
  });
}

describe('graceful shutdown', () => {
  it('lets an in-flight download finish, refuses new connections, and leaves no handle open', async () => {
    const before = process.getActiveResourcesInfo();
    const s = await startServer(`global:\n  wwwroot: ${www}\n  shutdownTimeout: 10000\n`);
    const download = await heldResponse(s.port, '/big.bin');
    const stopped = s.close();
    // The download cannot finish while it is held: the listener closes with it in flight.
    await until(() => isRefused(s.port), { what: 'new connections refused' });
    assert.deepEqual(await download.finish(), { received: 32 * 1024 * 1024, complete: true });
    await stopped;
    // Handles and timers alike: a timer the server left running keeps a process alive too.
    await until(() => opened(before), { ok: (left) => left.length === 0, what: 'no handle left' });
  });

  it('closes connections still busy after shutdownTimeout', async () => {
    const s = await startServer(`global:\n  wwwroot: ${www}\n  shutdownTimeout: 200\n`);
    // A reader that stops reading: the response cannot finish, so only the server can end it.
    const download = await heldResponse(s.port, '/big.bin');
    const started = Date.now();
    await s.close();
    assert.ok(Date.now() - started < 2000);
    // Reading what was already in flight, the client then meets the cut.
    const { received, complete } = await download.finish();
    assert.equal(complete, false);
    assert.ok(received < 32 * 1024 * 1024);
  });
});
