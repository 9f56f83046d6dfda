// GoAccess (Debian's goaccess) reads the json access log with the `--log-format` JSON spec that
// docs/running.md gives, and the combined one with `--log-format=COMBINED`: the same requests,
// counted the same, each status code as many times as it was answered.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { request } from '../helpers/http.js';
import { startServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'portico-goaccess-'));
const www = join(dir, 'www');
mkdirSync(join(www, 'sub'), { recursive: true });
writeFileSync(join(www, 'small.txt'), 'hello');
after(() => rmSync(dir, { recursive: true, force: true }));

/** The spec of docs/running.md, "Log formats". */
const JSON_SPEC =
  '{"time":"%x","client":"%h","host":"%v","method":"%m","path":"%U","protocol":"%H",' +
  '"status":"%s","bytes":"%b","duration":"%T","cache":"%C","user_agent":"%u","referer":"%R"}';
const JSON_ARGS = [`--log-format=${JSON_SPEC}`, '--datetime-format=%Y-%m-%dT%H:%M:%S%z'];

interface Report {
  general: { total_requests: number; valid_requests: number; failed_requests: number };
  status_codes: { data: { items: { data: string; hits: { count: number } }[] }[] };
}

/** GoAccess's JSON report of `log` read with `args`. */
function goaccess(log: string, args: string[]): Report {
  const run = spawnSync('goaccess', [log, ...args, '-o', 'json'], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout) as Report;
}

/** Status code → hits, as GoAccess counted them. */
function statuses(report: Report): Record<string, number> {
  const counted: Record<string, number> = {};
  for (const group of report.status_codes.data)
    for (const item of group.items) counted[item.data.slice(0, 3)] = item.hits.count;
  return counted;
}

it('GoAccess counts the requests and status codes of a json access log and of a combined one', async (t) => {
  if (spawnSync('goaccess', ['--version']).status !== 0) {
    assert.ok(!process.env.CI, 'goaccess is needed under CI');
    return t.skip('goaccess is not installed');
  }
  const logs = { json: join(dir, 'access.json'), combined: join(dir, 'access.log') };
  const s = await startServer(
    `global:\n  wwwroot: ${www}\nhosts:\n` +
      `  - domain: json.test\n    logFilePath: ${logs.json}\n    logFormat: json\n` +
      `  - domain: combined.test\n    logFilePath: ${logs.combined}\n`,
  );
  const requests: [string, number][] = [
    ['/small.txt', 200],
    ['/small.txt?again', 200],
    ['/small.txt', 200],
    ['/missing', 404],
    ['/missing.css', 404],
    ['/sub', 301],
  ];
  try {
    for (const host of ['json.test', 'combined.test'])
      for (const [path, status] of requests) {
        const headers = {
          host,
          'user-agent': 'Mozilla/5.0 (X11; Linux) "test"',
          referer: 'http://r/',
        };
        assert.equal((await request(s.port, path, { headers })).status, status, path);
      }
    for (const log of Object.values(logs))
      await until(() => readFileSync(log, 'utf8').split('\n').filter(Boolean).length, {
        ok: (n) => n === requests.length,
        what: `${requests.length} lines in ${log}`,
      });
  } finally {
    await s.close();
  }
  const expected = { '200': 3, '301': 1, '404': 2 };
  for (const [name, report] of [
    ['json', goaccess(logs.json, JSON_ARGS)],
    ['combined', goaccess(logs.combined, ['--log-format=COMBINED'])],
  ] as const) {
    assert.deepEqual(
      [
        report.general.total_requests,
        report.general.valid_requests,
        report.general.failed_requests,
      ],
      [requests.length, requests.length, 0],
      name,
    );
    assert.deepEqual(statuses(report), expected, name);
  }
});
