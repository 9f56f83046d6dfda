// The access log as log tools read it (CONTRACT point 9, issue 16 point 4): GoAccess (Debian's
// goaccess) and the combined format's usual regular expression must read every line, with and
// without Referer, User-Agent and user; the size is the body bytes sent; a request the HTTP parser
// refused is logged too.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { connect as http2Connect, constants as http2Constants } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { raw, request } from '../helpers/http.js';
import { freePort, startServer } from '../helpers/server.js';
import { SERVER_CERT, SERVER_KEY, TEST_CA } from '../helpers/tls.js';
import { until } from '../helpers/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'portico-access-'));
const www = join(dir, 'www');
spawnSync('mkdir', ['-p', www]);
writeFileSync(join(www, 'small.txt'), 'hello');
writeFileSync(join(www, 'big.bin'), Buffer.alloc(8 * 1024 * 1024, 1));
after(() => rmSync(dir, { recursive: true, force: true }));

// The combined format as analysers match it: every field present, the quoted ones quoted.
const COMBINED =
  /^(\S+) \S+ (\S+) \[[^\]]+\] "((?:[^"\\]|\\.)*)" (\d{3}) (\d+|-) "((?:[^"\\]|\\.)*)" "((?:[^"\\]|\\.)*)"$/;

const lineCount = (log: string) => readFileSync(log, 'utf8').split('\n').filter(Boolean).length;

it('writes lines every combined-format reader parses, with the body bytes sent', async (t) => {
  const log = join(dir, 'access.log');
  const s = await startServer(`global:\n  wwwroot: ${www}\n  logFilePath: ${log}\n`);
  try {
    // No Referer, no User-Agent.
    await raw(s.port, 'GET /small.txt HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n');
    await request(s.port, '/small.txt', {
      headers: { referer: 'http://a.test/', 'user-agent': 'Mozilla/5.0 (X11) "quoted"' },
    });
    await request(s.port, '/small.txt', { method: 'HEAD' });
    // Refused by the parser: not HTTP at all.
    await raw(s.port, 'HELLO THERE\x01\r\n\r\n');
    // A download the client gives up on after the first piece.
    await new Promise<void>((resolve) => {
      httpGet({ port: s.port, host: '127.0.0.1', path: '/big.bin', agent: false }, (res) => {
        res.once('data', () => {
          res.destroy();
          resolve();
        });
      });
    });
    // Its line comes once the server has seen it go.
    await until(() => lineCount(log), { ok: (n) => n === 5, what: 'five access log lines' });
  } finally {
    await s.close();
  }
  const lines = readFileSync(log, 'utf8').trim().split('\n');
  assert.equal(lines.length, 5, lines.join('\n'));
  const parsed = lines.map((l) => COMBINED.exec(l));
  assert.ok(
    parsed.every((m) => m !== null),
    `every line matches the combined format:\n${lines.join('\n')}`,
  );
  const by = (request: string) => parsed.find((m) => m![3]!.startsWith(request))!;
  const [bare, full, head] = parsed as [RegExpExecArray, RegExpExecArray, RegExpExecArray];
  assert.deepEqual([bare[5], bare[6], bare[7]], ['5', '-', '-']);
  assert.deepEqual(
    [full[5], full[6], full[7]],
    ['5', 'http://a.test/', 'Mozilla/5.0 (X11) \\"quoted\\"'],
  );
  assert.equal(head[3], 'HEAD /small.txt HTTP/1.1');
  assert.equal(head[5], '0', 'HEAD sends no body');
  const refused = by('HELLO');
  assert.equal(refused[4], '400');
  assert.equal(refused[3], 'HELLO THERE\\x01');
  const cut = by('GET /big.bin');
  assert.ok(Number(cut[5]) < 8 * 1024 * 1024, `a cut download logs what got out: ${cut[5]}`);

  if (spawnSync('goaccess', ['--version']).status !== 0) {
    assert.ok(!process.env.CI, 'goaccess is needed under CI');
    return t.skip('goaccess is not installed');
  }
  const report = spawnSync('goaccess', [log, '--log-format=COMBINED', '-o', 'json'], {
    encoding: 'utf8',
  });
  const general = (JSON.parse(report.stdout) as { general: Record<string, number> }).general;
  assert.equal(general.total_requests, 5);
  assert.equal(general.failed_requests, 0, 'GoAccess read every line');
});

it('logs each HTTP/2 request once, as HTTP/2.0, a reset download with what got out', async () => {
  const log = join(dir, 'access-h2.log');
  const sport = await freePort();
  const s = await startServer(
    `global:\n  sport: "127.0.0.1:${sport}"\n  secure: true\n  cert: ${SERVER_CERT}\n  key: ${SERVER_KEY}\n  disableToHTTPSRedirect: true\n  wwwroot: ${www}\n  logFilePath: ${log}\n`,
  );
  const session = http2Connect(`https://localhost:${sport}`, {
    ca: TEST_CA,
    host: '127.0.0.1',
  } as never);
  const fetchH2 = (path: string) =>
    new Promise<void>((resolve, reject) => {
      const stream = session.request({ ':path': path, ':authority': 'a.test' });
      stream.on('error', reject).on('end', resolve).resume();
    });
  try {
    await fetchH2('/small.txt');
    await fetchH2('/missing.txt');
    // A download the client resets after the first piece.
    await new Promise<void>((resolve) => {
      const stream = session.request({ ':path': '/big.bin', ':authority': 'a.test' });
      stream.once('data', () => {
        stream.close(http2Constants.NGHTTP2_CANCEL);
        resolve();
      });
    });
    await until(() => lineCount(log), { ok: (n) => n === 3, what: 'three access log lines' });
  } finally {
    session.close();
    await s.close();
  }
  const lines = readFileSync(log, 'utf8').trim().split('\n');
  assert.equal(lines.length, 3, lines.join('\n'));
  const parsed = lines.map((l) => COMBINED.exec(l)!);
  assert.ok(
    parsed.every((m) => m !== null && m[3]!.endsWith(' HTTP/2.0')),
    lines.join('\n'),
  );
  const by = (target: string) => parsed.find((m) => m[3] === `GET ${target} HTTP/2.0`)!;
  assert.deepEqual([by('/small.txt')[4], by('/small.txt')[5]], ['200', '5']);
  assert.equal(by('/missing.txt')[4], '404');
  const cut = Number(by('/big.bin')[5]);
  assert.ok(cut < 8 * 1024 * 1024, `a reset download logs what got out: ${cut}`);
});
