// `respond` as operators use it: a health endpoint and a maintenance page answered with their
// fixed bodies (HEAD with the head only, the header rules applied), a blocked path whose
// connection curl finds closed without a reply over HTTP/1.1 and whose stream alone is reset with
// CANCEL over HTTP/2, the server serving others meanwhile and logging 444; and where it runs in the
// chain: before nonStandardCodes, as nginx's `return` comes before its access checks.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect as http2Connect, constants, type IncomingHttpHeaders } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { curl as runCurl } from '../helpers/curl.js';
import { request } from '../helpers/http.js';
import { freePort, startServer, type RunningServer } from '../helpers/server.js';
import { SERVER_CERT, SERVER_KEY, TEST_CA, TEST_CA_FILE } from '../helpers/tls.js';
import { until } from '../helpers/wait.js';

const hasCurl = spawnSync('curl', ['--version']).status === 0;
if (!hasCurl && process.env.CI) throw new Error('CI needs curl');
const needsCurl = { skip: hasCurl ? false : 'curl is not installed' };

const root = mkdtempSync(join(tmpdir(), 'portico-respond-'));
writeFileSync(join(root, 'hello.txt'), 'hello');
const accessLog = join(root, 'access.log');

let s: RunningServer;
let sport: number;
before(async () => {
  sport = await freePort();
  s = await startServer(`
global:
  sport: "127.0.0.1:${sport}"
  secure: true
  disableToHTTPSRedirect: true
  cert: ${SERVER_CERT}
  key: ${SERVER_KEY}
  logFilePath: ${accessLog}
hosts:
  - domain: localhost
    wwwroot: ${root}
    setHeaders:
      X-Site: portico
    nonStandardCodes:
      - scode: 403
        regex: "^/private"
    locations:
      - path: /healthz
        respond:
          body: "ok\\n"
      - path: /maintenance
        respond:
          status: 503
          body: "<h1>Back soon</h1>"
          contentType: "text/html; charset=utf-8"
        setHeaders:
          Retry-After: "120"
      - path: /blocked
        respond:
          abort: true
      - path: /private/health
        respond:
          body: alive
      - path: /empty
        respond:
          status: 204
`);
});
after(async () => {
  await s?.close();
  rmSync(root, { recursive: true, force: true });
});

interface Curl {
  code: number;
  stdout: string;
  stderr: string;
}

/** curl for localhost on the plain listener (or the TLS one, over HTTP/2): its exit code and output. */
function curl(path: string, args: string[] = [], http2 = false): Promise<Curl> {
  const port = http2 ? sport : s.port;
  const url = `${http2 ? 'https' : 'http'}://localhost:${port}${path}`;
  const options = ['-sS', '-i', '--resolve', `localhost:${port}:127.0.0.1`, ...args];
  if (http2) options.push('--http2', '--cacert', TEST_CA_FILE);
  return runCurl([...options, url]).then((r) => ({ ...r, code: r.status ?? -1 }));
}

describe('respond: a fixed response', () => {
  it('answers a health endpoint with its body, the default type and the header rules, over HTTP/1.1', async () => {
    const r = await request(s.port, '/healthz', { headers: { host: 'localhost' } });
    assert.equal(r.status, 200);
    assert.equal(r.text, 'ok\n');
    assert.equal(r.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(r.headers['content-length'], '3');
    assert.equal(r.headers['x-site'], 'portico');
    assert.equal(r.headers['server'], 'Portico');
    // Under it too: the location answers every path.
    const below = await request(s.port, '/healthz/deep?x=1', { headers: { host: 'localhost' } });
    assert.deepEqual([below.status, below.text], [200, 'ok\n']);
  });

  it('answers HEAD with the head only', needsCurl, async () => {
    const r = await curl('/healthz', ['-I']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(r.stdout, /\r\ncontent-length: 3\r\n/i);
    assert.ok(r.stdout.endsWith('\r\n\r\n'), 'nothing after the head');
  });

  it(
    'sends a maintenance page with its status, type and the location’s own setHeaders, over HTTP/2',
    needsCurl,
    async () => {
      const r = await curl('/maintenance/any', [], true);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^HTTP\/2 503 \r\n/);
      assert.match(r.stdout, /\r\ncontent-type: text\/html; charset=utf-8\r\n/);
      assert.match(r.stdout, /\r\nretry-after: 120\r\n/);
      assert.match(r.stdout, /\r\nx-site: portico\r\n/);
      assert.ok(r.stdout.endsWith('\r\n\r\n<h1>Back soon</h1>'), r.stdout);
    },
  );

  it('sends a 204 without content', async () => {
    const r = await request(s.port, '/empty', { headers: { host: 'localhost' } });
    assert.equal(r.status, 204);
    assert.equal(r.text, '');
    assert.equal(r.headers['content-type'], undefined);
  });

  it('comes before nonStandardCodes: a health check inside a refused path still answers', async () => {
    const refused = await request(s.port, '/private/other', { headers: { host: 'localhost' } });
    assert.equal(refused.status, 403);
    const health = await request(s.port, '/private/health', { headers: { host: 'localhost' } });
    assert.deepEqual([health.status, health.text], [200, 'alive']);
  });
});

describe('respond: abort', () => {
  it(
    'closes an HTTP/1.1 connection without a reply (curl: empty reply), and logs 444',
    needsCurl,
    async () => {
      const r = await curl('/blocked/wp-login.php');
      assert.equal(r.code, 52, `curl's "empty reply from server"; ${r.stderr}`);
      assert.equal(r.stdout, '');
      const after = await request(s.port, '/hello.txt', { headers: { host: 'localhost' } });
      assert.deepEqual([after.status, after.text], [200, 'hello']);
      await until(() => readFileSync(accessLog, 'utf8'), {
        ok: (log) => /"GET \/blocked\/wp-login\.php HTTP\/1\.1" 444 0 /.test(log),
        what: 'the 444 in the access log',
      });
    },
  );

  it('resets only the stream over HTTP/2 (CANCEL), the session serving the next request', async () => {
    const session = http2Connect(`https://localhost:${sport}`, { ca: TEST_CA });
    try {
      const blocked = session.request({ ':path': '/blocked' }, { endStream: true });
      let head: IncomingHttpHeaders | undefined;
      blocked.on('response', (h) => (head = h));
      blocked.on('error', () => undefined);
      blocked.resume();
      await new Promise((resolve) => blocked.on('close', resolve));
      assert.equal(head, undefined, 'no response head');
      assert.equal(blocked.rstCode, constants.NGHTTP2_CANCEL);
      const next = session.request({ ':path': '/healthz' }, { endStream: true });
      const chunks: Buffer[] = [];
      let status = 0;
      next.on('response', (h) => (status = Number(h[':status'])));
      next.on('data', (d: Buffer) => chunks.push(d));
      await new Promise((resolve, reject) => {
        next.on('end', resolve);
        next.on('error', reject);
      });
      assert.deepEqual([status, Buffer.concat(chunks).toString()], [200, 'ok\n']);
      assert.equal(session.closed, false);
    } finally {
      session.close();
    }
  });

  it('curl over HTTP/2 sees the stream reset with CANCEL', needsCurl, async () => {
    const r = await curl('/blocked', [], true);
    assert.equal(r.code, 92, `curl's HTTP/2 stream error; ${r.stderr}`);
    assert.match(r.stderr, /CANCEL \(err 8\)/);
  });
});
