import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createReadStream, existsSync, readdirSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { mock, test, type TestContext } from 'node:test';
import { LogFile } from '../../src/log/log-file.js';
import { until } from '../helpers/wait.js';

const SOURCE = new URL('../../src/log/log-file.ts', import.meta.url).href;
const AS_ROOT = process.getuid?.() === 0;

async function tempDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'portico-logfile-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

function capture(): { stream: Writable; lines: () => string[] } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { stream, lines: () => chunks.join('').split('\n').filter(Boolean) };
}

// Real waiting that mocked setTimeout does not affect.
function immediate(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

async function idle(ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) await immediate();
}

const contents = (path: string) => readFile(path, 'utf8');

test('creates the file with mode 0640 and appends to an existing one', async (t) => {
  const path = join(await tempDir(t), 'a.log');
  let file = await LogFile.open(path);
  file.write('one\n');
  await file.close();
  assert.equal((await stat(path)).mode & 0o777, 0o640 & ~process.umask());
  file = await LogFile.open(path);
  file.write('two\n');
  await file.close();
  assert.equal(await contents(path), 'one\ntwo\n');
});

test('lines are buffered: written after the 100 ms tick, not before', async (t) => {
  const path = join(await tempDir(t), 'a.log');
  mock.timers.enable({ apis: ['setTimeout'] });
  t.after(() => mock.timers.reset());
  const file = await LogFile.open(path);
  file.write('one\n');
  file.write('two\n');
  await idle(200);
  assert.equal(await contents(path), '', 'nothing written before the flush interval');
  mock.timers.tick(99);
  await idle(100);
  assert.equal(await contents(path), '');
  mock.timers.tick(1);
  await until(async () => (await contents(path)) === 'one\ntwo\n', { what: 'the flush' });
  await file.close();
});

test('past 64 KiB the buffer is written at once, in one piece, without waiting for the tick', async (t) => {
  const path = join(await tempDir(t), 'a.log');
  mock.timers.enable({ apis: ['setTimeout'] });
  t.after(() => mock.timers.reset());
  const file = await LogFile.open(path);
  const line = `${'x'.repeat(1023)}\n`;
  for (let i = 0; i < 63; i++) file.write(line);
  await idle(100);
  assert.equal(await contents(path), '', '63 KiB stays buffered');
  file.write(line);
  await until(async () => (await contents(path)).length === 64 * 1024, {
    what: '64 KiB in the file',
  });
  await file.close();
});

test('close writes everything, later writes are ignored, and no handle or descriptor is left', async (t) => {
  const path = join(await tempDir(t), 'a.log');
  const fds = () => (existsSync('/proc/self/fd') ? readdirSync('/proc/self/fd').length : 0);
  // A finished fs request is listed until the event loop next turns, hence the immediate().
  const resources = async () => (await immediate(), process.getActiveResourcesInfo().sort());
  const before = { fds: fds(), resources: await resources() };
  const file = await LogFile.open(path);
  for (let i = 0; i < 1000; i++) file.write(`line ${i}\n`);
  await file.close();
  file.write('after close\n');
  await file.close();
  assert.deepEqual({ fds: fds(), resources: await resources() }, before);
  const lines = (await contents(path)).split('\n');
  assert.equal(lines.length, 1001);
  assert.equal(lines[999], 'line 999');
});

test('the flush timer never keeps the process alive', async (t) => {
  const path = join(await tempDir(t), 'a.log');
  // The child writes without closing: it must still exit at once, not hang on the timer.
  const script =
    `const { LogFile } = await import(${JSON.stringify(SOURCE)});` +
    `(await LogFile.open(process.argv[1])).write('x\\n');`;
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', script, path],
    {
      stdio: 'inherit',
    },
  );
  const timer = setTimeout(() => child.kill(), 10_000);
  const code = await new Promise((resolve) => child.on('exit', (status) => resolve(status)));
  clearTimeout(timer);
  assert.equal(code, 0);
});

test('rotation: rename, reopen; old lines stay in the renamed file, new ones go to the path', async (t) => {
  const dir = await tempDir(t);
  const path = join(dir, 'access.log');
  const rotated = join(dir, 'access.log.1');
  const file = await LogFile.open(path);
  file.write('flushed before rotation\n');
  await until(async () => (await contents(path)) !== '', { what: 'the first flush' });
  file.write('buffered before rotation\n');
  await rename(path, rotated);
  file.write('logged after the rename\n');
  const reopened = file.reopen();
  file.write('logged during reopen\n');
  await reopened;
  file.write('logged after reopen\n');
  await file.close();
  const old = await contents(rotated);
  const current = await contents(path);
  assert.ok(
    old.startsWith('flushed before rotation\nbuffered before rotation\nlogged after the rename\n'),
    old,
  );
  assert.ok(current.endsWith('logged after reopen\n'), current);
  // A line logged while reopening lands in one file or the other, never lost or reordered.
  assert.equal(
    old + current,
    'flushed before rotation\nbuffered before rotation\nlogged after the rename\nlogged during reopen\nlogged after reopen\n',
  );
});

test('an unopenable path is a clear error naming it', async (t) => {
  const dir = await tempDir(t);
  const missing = join(dir, 'missing', 'a.log');
  await assert.rejects(LogFile.open(missing), {
    message: `cannot open log file ${missing}: ENOENT: no such file or directory, open '${missing}'`,
  });
  await assert.rejects(LogFile.open(dir), {
    message: new RegExp(`^cannot open log file ${dir}: EISDIR`),
  });
});

// Root ignores file modes, so as root the child runs without the capabilities that let it.
const SETPRIV = ['setpriv', '--bounding-set=-dac_override,-dac_read_search', '--'];
const canDropRoot = !AS_ROOT || spawnSync(SETPRIV[0] ?? '', ['--version']).status === 0;

const noSetpriv = !canDropRoot && 'needs setpriv as root';
test(
  'a directory without write permission is EACCES, naming the path',
  {
    skip: noSetpriv,
  },
  async (t) => {
    const dir = await tempDir(t);
    await chmod(dir, 0o555); // stays empty, so removing it needs no write permission
    const path = join(dir, 'a.log');
    const script =
      `const { LogFile } = await import(${JSON.stringify(SOURCE)});` +
      `await LogFile.open(process.argv[1]).then(() => process.exit(3), (error) => console.log(error.message));`;
    const node = [process.execPath, '--import', 'tsx', '--input-type=module', '-e', script, path];
    const [command = '', ...args] = [...(AS_ROOT ? SETPRIV : []), ...node];
    const output = execFileSync(command, args, { encoding: 'utf8' });
    assert.equal(
      output,
      `cannot open log file ${path}: EACCES: permission denied, open '${path}'\n`,
    );
  },
);

test('a reopen that fails keeps logging to the previous file and says so', async (t) => {
  const dir = await tempDir(t);
  const path = join(dir, 'logs', 'a.log');
  execFileSync('mkdir', [join(dir, 'logs')]);
  const stderr = capture();
  const file = await LogFile.open(path, { stderr: stderr.stream });
  await rename(join(dir, 'logs'), join(dir, 'moved'));
  await file.reopen();
  file.write('still here\n');
  await file.close();
  assert.deepEqual(stderr.lines(), [
    `portico: cannot open log file ${path}: ENOENT: no such file or directory, open '${path}'; still logging to the previous file`,
  ]);
  assert.equal(await contents(join(dir, 'moved', 'a.log')), 'still here\n');
});

const noDevFull = !existsSync('/dev/full') && 'needs /dev/full';
test(
  'a write failure is reported once, disables the log, a reopen enables it',
  {
    skip: noDevFull,
  },
  async () => {
    const stderr = capture();
    const file = await LogFile.open('/dev/full', { stderr: stderr.stream });
    file.write('lost\n');
    await until(() => stderr.lines().length > 0, { what: 'the failure report' });
    for (let i = 0; i < 100; i++) file.write(`ignored ${i}\n`);
    await idle(250);
    assert.deepEqual(stderr.lines(), [
      'portico: cannot write log file /dev/full: ENOSPC: no space left on device, write; logging to it stops until reopened',
    ]);
    await file.reopen();
    file.write('fails again\n');
    await until(() => stderr.lines().length === 2, { what: 'the second report' });
    await file.close();
  },
);

const noFifo = process.platform === 'win32' && 'needs a FIFO';
test(
  'a stalled writer: memory stays bounded, lines are dropped, counted and reported in place',
  {
    skip: noFifo,
  },
  async (t) => {
    const fifo = join(await tempDir(t), 'fifo');
    execFileSync('mkfifo', [fifo]);
    // The reader is paused: once the pipe and the reader's buffer are full, the write blocks.
    const reader = createReadStream(fifo, { encoding: 'utf8' });
    const file = await LogFile.open(fifo);
    const lineOf = (i: number) => `${String(i).padStart(8, '0')} ${'x'.repeat(1014)}\n`; // 1 KiB
    const total = 24 * 1024;
    for (let i = 0; i < total; i++) {
      file.write(lineOf(i));
      if (i % 1024 === 1023) await idle(5);
    }
    let text = '';
    reader.on('data', (chunk) => {
      text += String(chunk);
    });
    const ended = new Promise<void>((resolve) => reader.on('end', () => resolve()));
    await until(() => text.includes('portico: dropped'), { what: 'the drop notice' });
    file.write('after the stall\n');
    await file.close();
    await ended;

    const lines = text.split('\n');
    assert.equal(lines.pop(), '');
    assert.equal(lines.pop(), 'after the stall');
    const notice = /^portico: dropped (\d+) log lines: the log file could not keep up$/.exec(
      lines.pop() ?? '',
    );
    assert.ok(notice, 'the notice precedes the first line logged after the stall');
    // What got through is the first lines, in order and whole; the rest were counted.
    lines.forEach((line, i) => assert.equal(`${line}\n`, lineOf(i)));
    assert.equal(lines.length + Number(notice[1]), total);
    // Pending bytes count until their write completes, so no more than 8 MiB was ever held.
    assert.ok(lines.length * 1024 <= 8 * 1024 * 1024, `${lines.length} KiB got through`);
    assert.ok(Number(notice[1]) >= 15 * 1024, `${notice[1]} dropped`);
  },
);
