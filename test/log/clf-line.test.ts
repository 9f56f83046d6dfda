import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { AccessLogEntry } from '../../src/log/access-entry.js';
import { AccessLog } from '../../src/log/access-log.js';
import { formatAccessLine, formatCommonLine } from '../../src/log/clf-line.js';
import { LogFile } from '../../src/log/log-file.js';

const SOURCE = new URL('../../src/log/clf-line.ts', import.meta.url).href;

// The example of Apache's log documentation, 13:55:36 UTC.
const entry: AccessLogEntry = {
  clientIp: '192.0.2.1',
  user: 'frank',
  time: new Date(Date.UTC(2000, 9, 10, 13, 55, 36, 250)),
  method: 'GET',
  target: '/apache_pb.gif?x=1',
  protocol: 'HTTP/1.1',
  status: 200,
  length: 2326,
  referer: 'http://www.example.com/start.html',
  userAgent: 'Mozilla/4.08 [en] (Win98; I ;Nav)',
};

const REST =
  '"GET /apache_pb.gif?x=1 HTTP/1.1" 200 2326 "http://www.example.com/start.html" ' +
  '"Mozilla/4.08 [en] (Win98; I ;Nav)"\n';

// Formats `entry` in a child process whose local time zone is `tz`.
function formatIn(tz: string): string {
  const script =
    `const { formatAccessLine } = await import(${JSON.stringify(SOURCE)});` +
    `const entry = JSON.parse(process.argv[1]); entry.time = new Date(entry.time);` +
    `process.stdout.write(formatAccessLine(entry));`;
  return execFileSync(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', script, JSON.stringify(entry)],
    { env: { ...process.env, TZ: tz }, encoding: 'utf8' },
  );
}

test('Combined Log Format line, exactly, in UTC', () => {
  assert.equal(formatIn('UTC'), `192.0.2.1 - frank [10/Oct/2000:13:55:36 +0000] ${REST}`);
});

test('local time and offset: Asia/Kolkata (+0530) and America/St_Johns (-0230 in summer)', () => {
  assert.equal(formatIn('Asia/Kolkata'), `192.0.2.1 - frank [10/Oct/2000:19:25:36 +0530] ${REST}`);
  assert.equal(
    formatIn('America/St_Johns'),
    `192.0.2.1 - frank [10/Oct/2000:11:25:36 -0230] ${REST}`,
  );
});

test("offset in this process's time zone agrees with Date#getTimezoneOffset", () => {
  const pad = (n: number) => String(n).padStart(2, '0');
  const winter = new Date(Date.UTC(2024, 0, 15, 3, 4, 5));
  const summer = new Date(Date.UTC(2024, 6, 15, 23, 59, 59));
  for (const time of [entry.time, winter, summer]) {
    const minutes = -time.getTimezoneOffset();
    const zone = `${minutes < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(minutes) / 60))}${pad(Math.abs(minutes) % 60)}`;
    const clock = `${pad(time.getHours())}:${pad(time.getMinutes())}:${pad(time.getSeconds())}`;
    const date = `${pad(time.getDate())}/${time.toLocaleString('en-US', { month: 'short' })}/${time.getFullYear()}`;
    assert.ok(
      formatAccessLine({ ...entry, time }).startsWith(
        `192.0.2.1 - frank [${date}:${clock} ${zone}] "GET `,
      ),
    );
  }
});

test('the per-second timestamp cache follows the clock, backwards too', () => {
  const at = (ms: number) => formatAccessLine({ ...entry, time: new Date(ms) }).slice(20, 48);
  const base = entry.time.getTime();
  const first = at(base);
  assert.equal(at(base + 700), first, 'same second');
  assert.notEqual(at(base + 750), first, 'next second');
  assert.equal(at(base), first, 'back again');
  assert.notEqual(at(base - 1000), first, 'previous second');
});

test('an absent user or length is a bare -, an absent referer or user agent a quoted "-" (CONTRACT point 9)', () => {
  const line = formatAccessLine({
    ...entry,
    user: undefined,
    length: undefined,
    referer: undefined,
    userAgent: undefined,
  });
  assert.match(
    line,
    /^192\.0\.2\.1 - - \[[^\]]+\] "GET \/apache_pb\.gif\?x=1 HTTP\/1\.1" 200 - "-" "-"\n$/,
  );
});

test('an IPv4-mapped IPv6 client is logged as plain IPv4; other IPv6 as it is', () => {
  assert.match(
    formatAccessLine({ ...entry, clientIp: '::ffff:203.0.113.9' }),
    /^203\.0\.113\.9 - /,
  );
  assert.match(
    formatAccessLine({ ...entry, clientIp: '::FFFF:203.0.113.9' }),
    /^203\.0\.113\.9 - /,
  );
  assert.match(formatAccessLine({ ...entry, clientIp: '2001:db8::1' }), /^2001:db8::1 - /);
  assert.match(formatAccessLine({ ...entry, clientIp: '::ffff:c000:201' }), /^::ffff:c000:201 - /);
});

test('quotes and backslashes are escaped in referer and user agent', () => {
  const line = formatAccessLine({
    ...entry,
    referer: 'http://x/"a"\\b',
    userAgent: 'say "hi" \\o/',
  });
  assert.ok(line.endsWith(' "http://x/\\"a\\"\\\\b" "say \\"hi\\" \\\\o/"\n'), line);
});

// Splits a Combined Log Format line the way a log analyser does, undoing the escapes.
const CLF =
  /^(\S+) - (\S+) \[([^\]]+)\] "((?:[^"\\]|\\.)*)" (\d{3}) (\S+) (-|"(?:[^"\\]|\\.)*") (-|"(?:[^"\\]|\\.)*")\n$/;
const unescape = (field: string): string =>
  field.replace(
    /\\x([0-9A-F]{2})|\\(["\\])/g,
    (_, hex?: string, char?: string) => char ?? String.fromCharCode(parseInt(hex ?? '', 16)),
  );

test('control characters, quotes and spaces cannot forge a line or a field; escapes round-trip', () => {
  const injected =
    '\n10.0.0.1 - admin [01/Jan/2000:00:00:00 +0000] "GET / HTTP/1.1" 200 1 "-" "-"\r';
  const forged: AccessLogEntry = {
    ...entry,
    user: `bob${injected}`,
    method: 'G\x00ET',
    target: `/a"b\\c\\x41${injected}?\x7f\x1b[31m`,
    referer: `r${injected}`,
    userAgent: `ua\t${injected}`,
  };
  const line = formatAccessLine(forged);
  assert.match(line, /^[\x20-\x7e]*\n$/, 'one line of printable ASCII');
  const fields = CLF.exec(line);
  assert.ok(fields, line);
  assert.equal(unescape(fields[2] ?? ''), forged.user);
  assert.equal(unescape(fields[4] ?? ''), `${forged.method} ${forged.target} HTTP/1.1`);
  assert.equal(fields[5], '200');
  assert.equal(unescape(fields[7]?.slice(1, -1) ?? ''), forged.referer);
  assert.equal(unescape(fields[8]?.slice(1, -1) ?? ''), forged.userAgent);
  assert.ok(line.includes(' - bob\\x0A10.0.0.1\\x20-\\x20admin\\x20[01/Jan/2000'), line);
  assert.ok(line.includes('"G\\x00ET /a\\"b\\\\c\\\\x41\\x0A10.0.0.1 - admin'), line);
  assert.ok(line.includes('\\x0D?\\x7F\\x1B[31m HTTP/1.1"'), line);
  assert.ok(line.includes(' "ua\\x09\\x0A10.0.0.1'), line);
  assert.match(formatAccessLine({ ...entry, user: '' }), /^192\.0\.2\.1 - - \[/);
});

test('non-ASCII: Latin-1 characters (raw header bytes from Node) as \\xHH, others as their UTF-8 bytes', () => {
  // "é" sent as UTF-8 reaches Node as the two Latin-1 characters \xC3\xA9.
  const line = formatAccessLine({ ...entry, target: '/caf\xc3\xa9', userAgent: 'x\u2028y😀' });
  assert.ok(line.includes('"GET /caf\\xC3\\xA9 HTTP/1.1"'), line);
  assert.ok(line.endsWith('"x\\xE2\\x80\\xA8y\\xF0\\x9F\\x98\\x80"\n'), line);
});

test('AccessLog: lines in its format into its file, the combined format by default', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'portico-access-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'access.log');
  const file = await LogFile.open(path);
  const combined = new AccessLog(file);
  const common = new AccessLog(file, { line: formatCommonLine, extended: false });
  assert.equal(combined.extended, false);
  combined.log(entry);
  common.log({ ...entry, status: 404 });
  await file.close();
  const lines = (await readFile(path, 'utf8')).split('\n');
  assert.equal(lines.length, 3);
  assert.equal(`${lines[0]}\n`, formatAccessLine(entry));
  assert.equal(`${lines[1]}\n`, formatCommonLine({ ...entry, status: 404 }));
});

test('the common format is the combined line without referer and user agent', () => {
  assert.equal(
    formatCommonLine(entry),
    `${formatAccessLine(entry).split(' "http://www.example.com/start.html"')[0]}\n`,
  );
  assert.match(
    formatCommonLine(entry),
    /^192\.0\.2\.1 - frank \[[^\]]+\] "GET \/apache_pb\.gif\?x=1 HTTP\/1\.1" 200 2326\n$/,
  );
});

test('a request the parser refused is logged with the line it sent', () => {
  assert.match(
    formatAccessLine({
      ...entry,
      user: undefined,
      rawLine: 'GARBAGE \x01 /',
      status: 400,
      length: 0,
    }),
    /^192\.0\.2\.1 - - \[[^\]]+\] "GARBAGE \\x01 \/" 400 0 /,
  );
});
