// Per-host logs: a host's requests and errors in its own files, the rest in the global ones; a file
// opened once however many name it, moved by a reload (the one left behind closed), reopened after
// rotation; every `logFormat`'s line for real requests, and the json one read back.
import assert from 'node:assert/strict';
import { connect as http2Connect } from 'node:http2';
import { once } from 'node:events';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { request } from '../helpers/http.js';
import { freePort, startServer } from '../helpers/server.js';
import { SERVER_CERT, SERVER_KEY, TEST_CA } from '../helpers/tls.js';
import { until } from '../helpers/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'portico-host-logs-'));
const www = join(dir, 'www');
mkdirSync(www);
writeFileSync(join(www, 'small.txt'), 'hello');
after(() => rmSync(dir, { recursive: true, force: true }));

const lines = (file: string): string[] =>
  existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];

/** Waits until `file` holds `count` lines, and returns them. */
const linesOf = (file: string, count: number) =>
  until(() => lines(file), {
    ok: (l) => l.length >= count,
    what: `${count} lines in ${file}`,
  }).then((l) => {
    assert.equal(l.length, count, `${file}:\n${l.join('\n')}`);
    return l;
  });

const get = (port: number, host: string, path = '/small.txt', headers = {}) =>
  request(port, path, { headers: { host, ...headers } });

/** How many descriptors this process holds on `file` (the server runs in it). */
function openCount(file: string): number {
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === file;
    } catch {
      return false;
    }
  }).length;
}

it('each host logs its requests and errors to its own files; the rest goes to the global ones', async (t) => {
  const at = (name: string) => join(dir, `split-${name}`);
  const dead = await freePort(); // nothing listens there: a's proxy fails with 503
  // Cuts every response after its head: the proxy module itself logs that, to the host's log.
  const cutting = createServer((_req, res) => {
    res.writeHead(200, { 'content-length': '100' });
    res.write('partial', () => res.socket?.destroy());
  });
  cutting.listen(0, '127.0.0.1');
  await once(cutting, 'listening');
  t.after(() => cutting.close());
  const cut = `http://127.0.0.1:${(cutting.address() as AddressInfo).port}`;
  const s = await startServer(
    `global:
  wwwroot: ${www}
  loadModules: [rproxy]
  logFilePath: ${at('global.log')}
  errorLogFilePath: ${at('global.error')}
  errorPages:
    - scode: 404
      path: ${join(dir, 'no-such-page.html')}
hosts:
  - domain: a.test
    proxyTo: http://127.0.0.1:${dead}
    logFilePath: ${at('a.log')}
    errorLogFilePath: ${at('a.error')}
  - domain: b.test
    logFilePath: ${at('b.log')}
    errorLogFilePath: ${at('b.error')}
  - domain: c.test
    proxyTo: ${cut}
    errorLogFilePath: ${at('c.error')}
  - domain: d.test
    proxyTo: ${cut}
`,
  );
  try {
    assert.equal((await get(s.port, 'a.test', '/x')).status, 503);
    assert.equal((await get(s.port, 'b.test')).status, 200);
    assert.equal((await get(s.port, 'b.test', '/nope')).status, 404);
    assert.equal((await get(s.port, 'other.test')).status, 200);
    assert.equal((await get(s.port, 'other.test', '/gone')).status, 404);
    // The same backend for c and d: one host logs what its proxy met to its file, one globally.
    for (const host of ['c.test', 'd.test'])
      assert.equal(
        (await request(s.port, '/', { headers: { host }, cut: 'resolve' })).complete,
        false,
      );
    const [a] = await linesOf(at('a.log'), 1);
    assert.match(a!, /"GET \/x HTTP\/1\.1" 503 /);
    const b = await linesOf(at('b.log'), 2);
    assert.match(b[0]!, /"GET \/small\.txt HTTP\/1\.1" 200 5 /);
    assert.match(b[1]!, /"GET \/nope HTTP\/1\.1" 404 /);
    // c and d have no access log of their own: the global one has their lines.
    const global = await linesOf(at('global.log'), 4);
    assert.match(global[0]!, /"GET \/small\.txt HTTP\/1\.1" 200 5 /);
    assert.match(global[1]!, /"GET \/gone HTTP\/1\.1" 404 /);
    const [cError] = await linesOf(at('c.error'), 1);
    assert.match(
      cError!,
      /\[upstream-failed\] proxy to .*: the response was cut after 7 body bytes/,
    );

    const [aError] = await linesOf(at('a.error'), 1);
    assert.match(aError!, /^\[[^\]]+\]: \[upstream-\w+\] .*127\.0\.0\.1:\d+/);
    const [bError] = await linesOf(at('b.error'), 1);
    assert.match(bError!, /Cannot use error page .*no-such-page\.html/);
    // The unmatched request's error and d's, and nothing of a's, b's or c's.
    const globalErrors = await until(() => lines(at('global.error')), {
      ok: (l) =>
        l.some((line) => line.includes('Cannot use error page')) &&
        l.some((line) => line.includes('was cut')),
      what: "the unmatched request's and d's errors in the global error log",
    });
    const count = (text: string) => globalErrors.filter((line) => line.includes(text)).length;
    assert.deepEqual(
      [count('Cannot use error page'), count('[upstream-')],
      [1, 1],
      globalErrors.join('\n'),
    );
  } finally {
    await s.close();
  }
  assert.match(lines(at('global.error')).at(-1)!, /Portico stopped$/);
  assert.equal(lines(at('a.error')).length, 1, 'the server-wide "stopped" is not a host error');
});

it('a file named by several hosts is opened once; a reload moves a host, closing what it left', async () => {
  const shared = join(dir, 'move-shared.log');
  const first = join(dir, 'move-a1.log');
  const second = join(dir, 'move-a2.log');
  const yaml = (aLog: string) => `global:
  wwwroot: ${www}
  logFilePath: ${shared}
hosts:
  - domain: a.test
    logFilePath: ${aLog}
    logFormat: common
  - domain: b.test
    logFilePath: ${shared}
  - domain: c.test
    logFilePath: ${shared}
`;
  const s = await startServer(yaml(first));
  try {
    await get(s.port, 'a.test');
    await get(s.port, 'b.test');
    await get(s.port, 'c.test');
    await linesOf(first, 1);
    await linesOf(shared, 2);
    assert.equal(openCount(shared), 1, 'three sites, one open file');
    assert.equal(openCount(first), 1);

    s.rewrite(yaml(second));
    assert.deepEqual(await s.server.reloadFromSource(), { ok: true, reloads: 1 });
    await get(s.port, 'a.test', '/small.txt?after');
    await linesOf(second, 1);
    assert.match(lines(second)[0]!, /"GET \/small\.txt\?after HTTP\/1\.1" 200 5$/);
    assert.equal(lines(first).length, 1, 'the old file gets nothing more');
    await until(() => openCount(first), { ok: (n) => n === 0, what: `${first} closed` });
    assert.equal(openCount(shared), 1, 'kept open across the reload, still once');

    // logrotate's way: rename, then the signal's reopen, for host files as for the global one.
    renameSync(second, `${second}.1`);
    renameSync(shared, `${shared}.1`);
    await s.server.reopenLogs();
    await get(s.port, 'a.test', '/small.txt?rotated');
    await get(s.port, 'b.test', '/small.txt?rotated');
    await linesOf(second, 1);
    await linesOf(shared, 1);
    assert.match(lines(second)[0]!, /\?rotated /);
    assert.equal(lines(`${second}.1`).length, 1);
    assert.equal(lines(`${shared}.1`).length, 2);
  } finally {
    await s.close();
  }
  assert.equal(openCount(shared), 0);
  assert.equal(openCount(second), 0);
});

/** `127.0.0.1 - - [10/Oct/2000:13:55:36 +0000] ` and the rest of the line. */
const CLF_START = /^127\.0\.0\.1 - - \[\d{2}\/\w{3}\/\d{4}:\d{2}:\d{2}:\d{2} [+-]\d{4}\] (.*)$/;

it("each format's line for one request: combined and common exactly, json and a template", async () => {
  const at = (name: string) => join(dir, `formats-${name}.log`);
  const host = (name: string, format: string) =>
    `  - domain: ${name}.test\n    logFilePath: ${at(name)}\n    logFormat: '${format}'\n`;
  const s = await startServer(
    `global:\n  wwwroot: ${www}\nhosts:\n${host('combined', 'combined')}${host('common', 'common')}` +
      `${host('json', 'json')}${host('template', '{host} {method} {path} {status} {bytes} {duration_ms}ms "{user_agent}" {tls} {cache} {upstream_time}')}`,
  );
  const headers = { 'user-agent': 'agent/1.0 "quoted"', referer: 'http://ref.test/page' };
  try {
    for (const name of ['combined', 'common', 'json', 'template'])
      assert.equal((await get(s.port, `${name}.test`, '/small.txt?q=1', headers)).status, 200);
    const [combined] = await linesOf(at('combined'), 1);
    assert.equal(
      CLF_START.exec(combined!)?.[1],
      '"GET /small.txt?q=1 HTTP/1.1" 200 5 "http://ref.test/page" "agent/1.0 \\"quoted\\""',
    );
    const [common] = await linesOf(at('common'), 1);
    assert.equal(CLF_START.exec(common!)?.[1], '"GET /small.txt?q=1 HTTP/1.1" 200 5');
    const [json] = await linesOf(at('json'), 1);
    const entry = JSON.parse(json!) as Record<string, unknown>;
    assert.match(entry.time as string, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/);
    assert.ok(Math.abs(Date.parse(entry.time as string) - Date.now()) < 60_000, json);
    assert.equal(typeof entry.duration, 'number');
    assert.ok((entry.duration as number) >= 0 && (entry.duration as number) < 10, json);
    delete entry.time;
    delete entry.duration;
    assert.deepEqual(entry, {
      client: '127.0.0.1',
      user: null,
      host: 'json.test',
      method: 'GET',
      path: '/small.txt?q=1',
      protocol: 'HTTP/1.1',
      status: 200,
      bytes: 5,
      upstream_time: null,
      tls: null,
      cache: null,
      user_agent: 'agent/1.0 "quoted"',
      referer: 'http://ref.test/page',
    });
    const [template] = await linesOf(at('template'), 1);
    assert.match(
      template!,
      /^template\.test GET \/small\.txt\?q=1 200 5 \d+ms "agent\/1\.0 \\"quoted\\"" - - -$/,
    );
  } finally {
    await s.close();
  }
});

it('json lines carry the upstream time, the cache status and the TLS version', async () => {
  const log = join(dir, 'proxied.log');
  const backend = createServer((req, res) => {
    res.setHeader('cache-control', 'max-age=60');
    res.end(`from the backend: ${req.url}`);
  });
  backend.listen(0, '127.0.0.1');
  await once(backend, 'listening');
  const sport = await freePort();
  const started = startServer(
    `global:
  sport: "127.0.0.1:${sport}"
  secure: true
  cert: ${SERVER_CERT}
  key: ${SERVER_KEY}
  disableToHTTPSRedirect: true
  wwwroot: ${www}
  loadModules: [cache, rproxy]
hosts:
  - domain: localhost
    proxyTo: http://127.0.0.1:${(backend.address() as AddressInfo).port}
    logFilePath: ${log}
    logFormat: json
`,
  );
  try {
    const s = await started;
    try {
      for (let i = 0; i < 2; i++) {
        const reply = await request(sport, '/cached', {
          tls: true,
          headers: { host: 'localhost' },
        });
        assert.equal(reply.text, 'from the backend: /cached');
      }
      await get(s.port, 'localhost', '/plain');
      const [miss, hit, plain] = (await linesOf(log, 3)).map(
        (line) => JSON.parse(line) as Record<string, unknown>,
      );
      assert.deepEqual([miss!.cache, miss!.tls, miss!.host], ['MISS', 'TLSv1.3', 'localhost']);
      assert.equal(typeof miss!.upstream_time, 'number');
      assert.ok((miss!.upstream_time as number) <= (miss!.duration as number) + 0.001, `${miss}`);
      assert.deepEqual([hit!.cache, hit!.upstream_time, hit!.tls], ['HIT', null, 'TLSv1.3']);
      assert.deepEqual([plain!.path, plain!.tls, plain!.cache], ['/plain', null, 'MISS']);
      assert.equal(typeof plain!.upstream_time, 'number');
      // Over HTTP/2 too: node:http2 forgets a stream's session before its line is made.
      const session = http2Connect(`https://localhost:${sport}`, { ca: TEST_CA } as never);
      try {
        const stream = session.request({ ':path': '/cached', ':authority': 'localhost' });
        stream.resume();
        await once(stream, 'end');
      } finally {
        session.close();
      }
      const h2 = JSON.parse((await linesOf(log, 4))[3]!) as Record<string, unknown>;
      assert.deepEqual([h2.protocol, h2.tls], ['HTTP/2.0', 'TLSv1.3']);
    } finally {
      await s.close();
    }
  } finally {
    backend.close();
  }
});
