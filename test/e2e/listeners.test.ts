// Listeners as an operator writes them: `port` as a list of addresses, all answering; a Unix socket
// reached by curl (the real one), made with socketMode and removed at stop; a socket file a killed
// server left behind reclaimed, while a live server's socket and a regular file are left alone;
// `workers: 2` serving one Unix socket together.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, describe, it } from 'node:test';
import { runServing, type ServingCli } from '../helpers/cli.js';
import { request } from '../helpers/http.js';
import { freePort, freePorts, startServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';
import { spawnPortico } from '../security/portico-process.js';

const dir = mkdtempSync(join(tmpdir(), 'portico-listeners-'));
const www = join(dir, 'www');
mkdirSync(www);
writeFileSync(join(www, 'index.html'), 'hello from portico');
after(() => rmSync(dir, { recursive: true, force: true }));
// A test that fails half-way leaves no server behind.
const started = new Set<ServingCli>();
after(() => started.forEach((cli) => cli.child.kill('SIGKILL')));

const run = promisify(execFile);

/** A socket file left as a killed server leaves it: bound, then the process killed. */
async function staleSocket(path: string): Promise<void> {
  const script = `require('net').createServer().listen(${JSON.stringify(path)}, () => process.kill(process.pid, 'SIGKILL'))`;
  await run(process.execPath, ['-e', script]).catch(() => undefined);
  assert.ok(lstatSync(path).isSocket());
}

/** curl over a Unix socket: status and body. */
async function curlUnix(socket: string, path = '/index.html'): Promise<[string, string]> {
  const { stdout } = await run('curl', [
    '-s',
    '--max-time',
    '10',
    '--unix-socket',
    socket,
    '-w',
    '\n%{http_code}',
    `http://localhost${path}`,
  ]);
  const cut = stdout.lastIndexOf('\n');
  return [stdout.slice(cut + 1), stdout.slice(0, cut)];
}

describe('listeners', () => {
  it('serves a Unix socket to curl, with socketMode, and removes it at stop', async () => {
    const socket = join(dir, 'http.sock');
    const s = await startServer(`global:\n  wwwroot: ${www}\n  socketMode: "0620"\n`, {
      listen: (port) => [`127.0.0.1:${port}`, `unix:${socket}`] as unknown as string,
    });
    try {
      assert.deepEqual(s.server.listenerUrls, [s.url, `http://unix:${socket}`]);
      const stat = lstatSync(socket);
      assert.ok(stat.isSocket());
      assert.equal((stat.mode & 0o777).toString(8), '620');
      assert.deepEqual(await curlUnix(socket), ['200', 'hello from portico']);
      // The TCP entry of the same list answers too.
      assert.equal((await request(s.port, '/index.html')).text, 'hello from portico');
    } finally {
      await s.close();
    }
    assert.equal(existsSync(socket), false, 'the socket file is removed at stop');
  });

  it('answers on every TCP address of a list', async () => {
    const [a, b] = await freePorts(2);
    const s = await startServer(`global:\n  wwwroot: ${www}\n`, {
      listen: () => [`127.0.0.1:${a}`, `127.0.0.2:${a}`, `[::1]:${b}`] as unknown as string,
    });
    try {
      assert.deepEqual(s.server.listenerUrls, [
        `http://127.0.0.1:${a}`,
        `http://127.0.0.2:${a}`,
        `http://[::1]:${b}`,
      ]);
      for (const url of [`http://127.0.0.1:${a}`, `http://127.0.0.2:${a}`, `http://[::1]:${b}`]) {
        const { stdout } = await run('curl', ['-s', '--max-time', '10', `${url}/index.html`]);
        assert.equal(stdout, 'hello from portico', url);
      }
    } finally {
      await s.close();
    }
  });

  it('keeps an unchanged Unix socket bound across a reload that adds a TCP address', async () => {
    const socket = join(dir, 'reload.sock');
    const port = await freePort();
    const yaml = (ports: string[]) =>
      `global:\n  wwwroot: ${www}\n  port: ${JSON.stringify(ports)}\n`;
    const s = await startServer(yaml([`unix:${socket}`]));
    try {
      const inode = lstatSync(socket).ino;
      s.rewrite(yaml([`unix:${socket}`, `127.0.0.1:${port}`]));
      assert.equal((await s.server.reloadFromSource()).ok, true);
      assert.equal(lstatSync(socket).ino, inode, 'the socket was never unbound');
      assert.deepEqual(await curlUnix(socket), ['200', 'hello from portico']);
      assert.equal((await request(port, '/index.html')).status, 200);
    } finally {
      await s.close();
    }
  });

  it('reclaims the socket file of a killed server, never a live one or a regular file', async () => {
    const socket = join(dir, 'stale.sock');
    const yaml = `global:\n  wwwroot: www\n  port: "unix:${socket}"\n`;
    const files = { 'www/index.html': 'hello from portico' };
    const killed = await spawnPortico(yaml, { files });
    process.kill(killed.pid, 'SIGKILL');
    await killed.stop();
    assert.ok(lstatSync(socket).isSocket(), 'a killed server leaves its socket file');
    const again = await spawnPortico(yaml, { files });
    try {
      assert.deepEqual(await curlUnix(socket), ['200', 'hello from portico']);
      // While it serves, a second server on the same path is refused and takes nothing away.
      await assert.rejects(spawnPortico(yaml, { files }), /another server is listening on/);
      assert.deepEqual(await curlUnix(socket), ['200', 'hello from portico']);
    } finally {
      await again.stop();
    }
    assert.equal(existsSync(socket), false);
    writeFileSync(socket, 'not a socket');
    await assert.rejects(spawnPortico(yaml, { files }), /exists and is not a socket/);
    assert.equal(readFileSync(socket, 'utf8'), 'not a socket', 'a regular file is never removed');
  });

  it('serves one Unix socket from two workers', async () => {
    const socket = join(dir, 'workers.sock');
    // A stale file from an earlier run is reclaimed by the primary before the workers bind.
    await staleSocket(socket);
    const adminPort = await freePort();
    const file = join(dir, 'workers.yaml');
    writeFileSync(
      file,
      `global:\n  port: "unix:${socket}"\n  wwwroot: ${www}\n  workers: 2\n  socketMode: "0600"\n  admin:\n    listen: ${adminPort}\n    status: true\n`,
    );
    const cli = await runServing(file);
    started.add(cli);
    try {
      assert.equal((lstatSync(socket).mode & 0o777).toString(8), '600');
      // Each request on a connection of its own: node:cluster hands connections out in turn.
      const served = async () =>
        (
          JSON.parse((await request(adminPort, '/status')).text) as {
            workers: { requests_total: number }[];
          }
        ).workers.map((w) => w.requests_total);
      await until(
        async () => {
          assert.deepEqual(await curlUnix(socket), ['200', 'hello from portico']);
          return served();
        },
        {
          ok: (counts) => counts.length === 2 && counts.every((n) => n > 0),
          what: 'both workers serving',
        },
      );
    } finally {
      cli.child.kill('SIGTERM');
      assert.equal(await cli.exited, 0);
      started.delete(cli);
    }
    assert.equal(existsSync(socket), false, 'the primary removes the socket at stop');
  });
});
