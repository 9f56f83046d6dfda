// PROXY protocol from a real HAProxy (Debian's haproxy, in TCP mode): curl connects to HAProxy from
// 127.0.0.2, HAProxy connects to Portico from 127.0.0.1 and sends `send-proxy` (v1) or
// `send-proxy-v2` before the client's bytes, and Portico's access log names 127.0.0.2, over HTTP
// and over HTTPS (the header before the TLS ClientHello). A client that connects directly is
// served as itself, without a header.
import assert from 'node:assert/strict';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, describe, it, type TestContext } from 'node:test';
import { request } from '../helpers/http.js';
import { freePort, startServer, type RunningServer } from '../helpers/server.js';
import { SERVER_CERT, SERVER_KEY, TEST_CA_FILE } from '../helpers/tls.js';
import { until } from '../helpers/wait.js';

const HAPROXY = spawnSync('haproxy', ['-v']).status === 0;
const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'portico-proxy-protocol-'));
const www = join(dir, 'www');
mkdirSync(www);
writeFileSync(join(www, 'index.html'), 'behind haproxy');
after(() => rmSync(dir, { recursive: true, force: true }));

function needHaproxy(t: TestContext): boolean {
  if (HAPROXY) return true;
  assert.ok(!process.env.CI, 'haproxy is needed under CI (see .ci/run)');
  t.skip('haproxy is not installed');
  return false;
}

/** HAProxy on a free loopback port, passing TCP to `target` with `send`; stopped by pid. */
async function haproxy(t: TestContext, target: number, send: string): Promise<number> {
  const port = await freePort();
  const config = join(dir, `haproxy-${port}.cfg`);
  writeFileSync(
    config,
    [
      'defaults',
      '  mode tcp',
      '  timeout connect 5s',
      '  timeout client 30s',
      '  timeout server 30s',
      'frontend in',
      `  bind 127.0.0.1:${port}`,
      '  default_backend portico',
      'backend portico',
      `  server portico 127.0.0.1:${target} ${send}`,
      '',
    ].join('\n'),
  );
  // -db: in the foreground, so the pid is HAProxy's own.
  const child = spawn('haproxy', ['-db', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let errors = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (errors += d));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  t.after(async () => {
    child.kill('SIGTERM');
    await exited;
  });
  await until(
    () =>
      new Promise<boolean>((resolve) => {
        const probe = connect(port, '127.0.0.1', () => {
          probe.destroy();
          resolve(true);
        });
        probe.on('error', () => resolve(false));
      }),
    { what: `haproxy listening on ${port} (${errors})` },
  );
  return port;
}

async function portico(t: TestContext, log: string, extra = ''): Promise<RunningServer> {
  const s = await startServer(
    `global:\n  wwwroot: ${www}\n  logFilePath: ${log}\n  proxyProtocol: true\n  trustedProxies: [127.0.0.1]\n${extra}`,
  );
  t.after(() => s.close());
  return s;
}

/** The client address of each access-log line. */
function clients(log: string): string[] {
  try {
    return readFileSync(log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(' ')[0]!);
  } catch {
    return [];
  }
}

describe('PROXY protocol from HAProxy', () => {
  for (const send of ['send-proxy', 'send-proxy-v2']) {
    it(`logs the client HAProxy names with ${send}`, async (t) => {
      if (!needHaproxy(t)) return;
      const log = join(dir, `access-${send}.log`);
      const s = await portico(t, log);
      const front = await haproxy(t, s.port, send);
      const { stdout } = await run('curl', [
        '-s',
        '--max-time',
        '10',
        '--interface',
        '127.0.0.2',
        `http://127.0.0.1:${front}/index.html`,
      ]);
      assert.equal(stdout, 'behind haproxy');
      // A client of its own, straight to Portico, is itself.
      assert.equal((await request(s.port, '/index.html')).status, 200);
      const seen = await until(() => clients(log), { ok: (c) => c.length === 2 });
      assert.deepEqual(seen.sort(), ['127.0.0.1', '127.0.0.2']);
    });
  }

  it('reads the header before HTTP/2 with prior knowledge (enableH2C)', async (t) => {
    if (!needHaproxy(t)) return;
    const log = join(dir, 'access-h2c.log');
    const s = await portico(t, log, '  enableH2C: true\n');
    const front = await haproxy(t, s.port, 'send-proxy');
    const { stdout } = await run('curl', [
      '-s',
      '--max-time',
      '10',
      '--http2-prior-knowledge',
      '--interface',
      '127.0.0.2',
      '-w',
      ' %{http_version}',
      `http://127.0.0.1:${front}/index.html`,
    ]);
    assert.equal(stdout, 'behind haproxy 2');
    const seen = await until(() => clients(log), { ok: (c) => c.length === 1 });
    assert.deepEqual(seen, ['127.0.0.2']);
  });

  it('reads the header before the TLS handshake (send-proxy-v2 to HTTPS)', async (t) => {
    if (!needHaproxy(t)) return;
    const log = join(dir, 'access-tls.log');
    const sport = await freePort();
    const s = await portico(
      t,
      log,
      `  secure: true\n  sport: "127.0.0.1:${sport}"\n  cert: ${SERVER_CERT}\n  key: ${SERVER_KEY}\n`,
    );
    assert.ok(s.server.listenerUrls.includes(`https://127.0.0.1:${sport}`));
    const front = await haproxy(t, sport, 'send-proxy-v2');
    for (const http of ['--http1.1', '--http2']) {
      const { stdout } = await run('curl', [
        '-s',
        '--max-time',
        '10',
        http,
        '--interface',
        '127.0.0.2',
        '--cacert',
        TEST_CA_FILE,
        '--resolve',
        `localhost:${front}:127.0.0.1`,
        `https://localhost:${front}/index.html`,
      ]);
      assert.equal(stdout, 'behind haproxy', http);
    }
    const seen = await until(() => clients(log), { ok: (c) => c.length === 2 });
    assert.deepEqual(seen, ['127.0.0.2', '127.0.0.2']);
  });
});
