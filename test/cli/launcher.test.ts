// The launcher: `node bin/portico.js run` serves from a child process started with Node's flags
// (src/cli/node-flags.ts), and signals reach it as an operator and systemd send them.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { NODE_FLAGS } from '../../src/cli/node-flags.js';
import { BIN, runServing } from '../helpers/cli.js';
import { request } from '../helpers/http.js';
import { freePort } from '../helpers/server.js';
import { logged, until } from '../helpers/wait.js';

const linux = process.platform === 'linux';
const dir = mkdtempSync(join(tmpdir(), 'portico-launcher-'));
writeFileSync(join(dir, 'index.html'), 'hello');
writeFileSync(join(dir, 'big.bin'), Buffer.alloc(32 * 1024 * 1024, 7));
after(() => rmSync(dir, { recursive: true, force: true }));

async function config(extra = ''): Promise<{ file: string; port: number }> {
  const port = await freePort();
  const file = join(dir, `portico-${port}.yaml`);
  // One serving process: the launcher's child (workers of a primary are another test's).
  writeFileSync(
    file,
    `global:\n  port: "127.0.0.1:${port}"\n  wwwroot: ${dir}\n  workers: 1\n${extra}`,
  );
  return { file, port };
}

/** The processes `pid` started (Linux: its main thread's children). */
function childrenOf(pid: number): number[] {
  const text = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
  return text === '' ? [] : text.split(' ').map(Number);
}

const commandLine = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
const alive = (pid: number) => existsSync(`/proc/${pid}`);

describe('the launcher', { skip: !linux && 'reads processes from /proc' }, () => {
  it('serves from a child started with Node’s flags, which stops once when systemd signals both', async () => {
    const { file, port } = await config();
    const p = await runServing(file);
    const [server, ...others] = childrenOf(p.child.pid!);
    assert.equal(others.length, 0);
    const args = commandLine(server!);
    for (const flag of NODE_FLAGS) assert.ok(args.includes(flag), `${flag} in ${args.join(' ')}`);
    assert.equal((await request(port, '/')).text, 'hello');

    // systemd's KillMode=control-group: every process of the unit gets the SIGTERM.
    process.kill(server!, 'SIGTERM');
    p.child.kill('SIGTERM');
    assert.equal(await p.exited, 0);
    assert.equal(p.output().match(/stopping gracefully/g)?.length, 1);
    assert.doesNotMatch(p.output(), /again: stopping now/);
    await until(() => !alive(server!), { what: 'the server process gone' });
  });

  it('passes SIGHUP and SIGUSR1 on, and a second SIGTERM stops at once', async () => {
    const { file, port } = await config('  shutdownTimeout: 60000\n');
    const p = await runServing(file);
    p.child.kill('SIGHUP');
    await logged(p.output, /reloaded by SIGHUP/);
    p.child.kill('SIGUSR1');
    await logged(p.output, /logs reopened/);

    // A download the client stops reading keeps a graceful stop waiting.
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write('GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n');
    await once(socket, 'data');
    socket.pause();
    p.child.kill('SIGTERM');
    await logged(p.output, /SIGTERM: stopping gracefully/);
    p.child.kill('SIGTERM');
    assert.equal(await p.exited, 1);
    assert.match(p.output(), /SIGTERM again: stopping now/);
    socket.destroy();
  });

  it('stops the server gracefully when the launcher is killed', async () => {
    const { file } = await config();
    const p = await runServing(file);
    const [server] = childrenOf(p.child.pid!);
    p.child.kill('SIGKILL');
    await p.exited;
    // Its output still comes through the pipe it shared with the launcher.
    await logged(p.output, /the launcher leaving: stopping gracefully/);
    await until(() => !alive(server!), { what: 'the server process gone' });
  });

  it('starts no child when Node already has the flags', async () => {
    const { file, port } = await config();
    const child = spawn(process.execPath, [...NODE_FLAGS, BIN, 'run', '-c', file], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = once(child, 'exit');
    await logged(() => out, /Portico is serving/);
    assert.equal((await request(port, '/')).text, 'hello');
    assert.deepEqual(childrenOf(child.pid!), []);
    child.kill('SIGTERM');
    assert.deepEqual(await exited, [0, null]);
  });
});
