import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { ErrorLog, formatErrorLine } from '../../src/log/error-log.js';

const SOURCE = new URL('../../src/log/error-log.ts', import.meta.url).href;
const TIME = Date.UTC(2000, 9, 10, 13, 55, 36);

function capture(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

function formatIn(tz: string, message: string): string {
  const script =
    `const { formatErrorLine } = await import(${JSON.stringify(SOURCE)});` +
    `process.stdout.write(formatErrorLine(process.argv[1], new Date(${TIME})));`;
  return execFileSync(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', script, message],
    {
      env: { ...process.env, TZ: tz },
      encoding: 'utf8',
    },
  );
}

test('error line in local time without a zone: UTC and Asia/Kolkata', () => {
  assert.equal(
    formatIn('UTC', 'upstream timed out'),
    '[2000-10-10 13:55:36]: upstream timed out\n',
  );
  assert.equal(
    formatIn('Asia/Kolkata', 'upstream timed out'),
    '[2000-10-10 19:25:36]: upstream timed out\n',
  );
});

test('local date and clock agree with the Date getters in this process', () => {
  const time = new Date(2024, 0, 5, 7, 8, 9);
  assert.equal(formatErrorLine('x', time), '[2024-01-05 07:08:09]: x\n');
});

test('a multi-line message stays on one line', () => {
  const line = formatErrorLine(
    'Error: boom\n    at f (a.js:1:1)\r\n\tdone \x1b[2J\x7f',
    new Date(TIME),
  );
  assert.match(
    line,
    /^\[[^\]]+\]: Error: boom\\n {4}at f \(a\.js:1:1\)\\r\\n\tdone \\x1B\[2J\\x7F\n$/,
  );
});

test('without a path the error log writes to the given stderr', async () => {
  const stderr = capture();
  const log = await ErrorLog.open(undefined, stderr.stream);
  log.log('first\nsecond');
  await log.reopen();
  await log.close();
  assert.match(stderr.text(), /^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\]: first\\nsecond\n$/);
});

test('with a path it writes to the file, which reopens and closes', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'portico-error-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'error.log');
  const stderr = capture();
  const log = await ErrorLog.open(path, stderr.stream);
  log.log('one');
  await log.reopen();
  log.log('two');
  await log.close();
  log.log('after close');
  assert.match(await readFile(path, 'utf8'), /^\[[^\]]+\]: one\n\[[^\]]+\]: two\n$/);
  assert.equal(stderr.text(), '');
});

test('an unopenable path rejects with an error naming it', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'portico-error-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'no', 'such', 'dir', 'error.log');
  await assert.rejects(ErrorLog.open(path), (error: Error) => {
    assert.ok(error.message.startsWith(`cannot open log file ${path}: ENOENT`), error.message);
    return true;
  });
});
