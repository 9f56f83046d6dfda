// What a request becomes and who may make it, end to end: rewriteMap, www redirect, blocklist and
// X-Forwarded-For, environment variables.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { request } from '../helpers/http.js';
import { startServer, type RunningServer } from '../helpers/server.js';
import { logged } from '../helpers/wait.js';

const root = mkdtempSync(join(tmpdir(), 'portico-url-'));
const www = join(root, 'www');
for (const d of ['new', 'app', 'static', 'dir']) mkdirSync(join(www, d), { recursive: true });
writeFileSync(join(www, 'new', 'page.html'), 'new page');
writeFileSync(join(www, 'app', 'index.html'), 'front controller');
writeFileSync(join(www, 'static', 'logo.txt'), 'real file');
writeFileSync(join(www, 'dir', 'index.html'), 'real directory');
writeFileSync(join(www, 'first.html'), 'first rule');
writeFileSync(join(www, 'second.html'), 'second rule');
writeFileSync(join(www, 'double.html'), 'double');
writeFileSync(join(www, 'index.html'), 'home');
writeFileSync(join(root, 'secret.txt'), 'SECRET');
after(() => rmSync(root, { recursive: true, force: true }));

describe('rewriteMap', () => {
  let s: RunningServer;
  const errorLog = join(root, 'error.log');
  before(async () => {
    s = await startServer(`
global:
  wwwroot: ${www}
  errorLogFilePath: ${errorLog}
  enableRewriteLogging: true
  rewriteMap:
    - regex: "^/old/(?P<name>[a-z]+)\\\\.htm$"
      replacement: /new/\${name}.html
    - regex: "^/app/(.*)"
      replacement: /app/index.html?route=$1
      isNotFile: true
      isNotDirectory: true
    - regex: "^/chain$"
      replacement: /first.html
      last: true
    - regex: "^/first.html$"
      replacement: /second.html
    - regex: "^/sneak/(.*)"
      replacement: /../../$1
    - regex: "^/relative"
      replacement: nowhere
    - regex: "(?i)^/SHOUT"
      replacement: /index.html
hosts:
  - domain: slashes.test
    allowDoubleSlashes: true
    rewriteMap:
      - regex: "^/keep//(.*)"
        replacement: /$1
        allowDoubleSlashes: true
      - regex: "^/collapsed/(.*)"
        replacement: /$1
  - domain: files.test
    rewriteMap:
      - regex: "^/(.*)\\\\.php"
        replacement: /$1.html
`);
  });
  after(() => s.close());

  it('replaces with $1 and named groups; the regex sees path and query', async () => {
    assert.equal((await request(s.port, '/old/page.htm')).text, 'new page');
    assert.equal(
      (await request(s.port, '/old/page.htm?x=1')).status,
      404,
      'the pattern ends with $, and the query is part of the subject',
    );
    assert.equal(
      (await request(s.port, '/first.php', { headers: { host: 'files.test' } })).text,
      'first rule',
      'host rules follow global ones',
    );
  });

  it('isNotFile / isNotDirectory leave real files and directories alone', async () => {
    assert.equal((await request(s.port, '/app/some/route')).text, 'front controller');
    assert.equal((await request(s.port, '/app/index.html')).text, 'front controller');
    writeFileSync(join(www, 'app', 'real.txt'), 'real under app');
    assert.equal((await request(s.port, '/app/real.txt')).text, 'real under app');
  });

  it('last stops after a rule that changed the URL; otherwise later rules see earlier results', async () => {
    assert.equal((await request(s.port, '/chain')).text, 'first rule');
    assert.equal((await request(s.port, '/first.html')).text, 'second rule');
  });

  it('a rewritten path is sanitized again: no way out of wwwroot', async () => {
    const r = await request(s.port, '/sneak/secret.txt');
    assert.equal(r.status, 404);
    assert.doesNotMatch(r.text, /SECRET/);
  });

  it('collapses // before matching unless the rule allows double slashes', async () => {
    const h = { host: 'slashes.test' };
    assert.equal((await request(s.port, '/keep//double.html', { headers: h })).text, 'double');
    assert.equal((await request(s.port, '/collapsed//double.html', { headers: h })).text, 'double');
    assert.equal(
      (await request(s.port, '/keep/double.html', { headers: h })).status,
      404,
      'the rule wants the //',
    );
  });

  it('a result that does not start with / is a 400; (?i) works', async () => {
    assert.equal((await request(s.port, '/relative')).status, 400);
    assert.equal((await request(s.port, '/shout')).text, 'home');
  });

  it('logs original → rewritten with enableRewriteLogging', async () => {
    await request(s.port, '/first.php?x=1', { headers: { host: 'files.test' } });
    await logged(
      () => readFileSync(errorLog, 'utf8'),
      /URL rewritten from "\/first\.php\?x=1" to "\/first\.html\?x=1"/,
    );
  });
});

describe('www redirect', () => {
  let s: RunningServer;
  before(async () => {
    s = await startServer(`
hosts:
  - domain: example.com
    wwwroot: ${www}
    wwwredirect: true
  - domain: www.example.org
    wwwroot: ${www}
    wwwredirect: true
  - domain: 127.0.0.1
    wwwroot: ${www}
    wwwredirect: true
`);
  });
  after(() => s.close());

  it('redirects the bare name to www., keeping port, path and query', async () => {
    const r = await request(s.port, '/dir/?a=1', { headers: { host: 'example.com:8080' } });
    assert.equal(r.status, 301);
    assert.equal(r.headers.location, 'http://www.example.com:8080/dir/?a=1');
  });

  it('not for names already starting with www., nor IP hosts', async () => {
    assert.equal(
      (await request(s.port, '/', { headers: { host: 'www.example.org' } })).status,
      200,
    );
    assert.equal((await request(s.port, '/', { headers: { host: '127.0.0.1' } })).status, 200);
  });
});

describe('blocklist and X-Forwarded-For', () => {
  let s: RunningServer;
  before(async () => {
    s = await startServer(`
global:
  wwwroot: ${www}
  blocklist: [192.0.2.7, 198.51.100.0/24, "2001:db8::/32", "::ffff:203.0.113.9"]
  customHeaders:
    X-Served-By: portico
hosts:
  - domain: proxied.test
    enableIPSpoofing: true
  - domain: blocked-direct.test
    wwwroot: ${www}
`);
  });
  after(() => s.close());

  it('blocks addresses, ranges and IPv6 ranges that arrive through X-Forwarded-For', async () => {
    for (const client of [
      '192.0.2.7',
      '198.51.100.23',
      '2001:db8:1::5',
      '203.0.113.9',
      '::ffff:192.0.2.7',
      '192.0.2.7, 10.0.0.1',
    ]) {
      const r = await request(s.port, '/', {
        headers: { host: 'proxied.test', 'x-forwarded-for': client },
      });
      assert.equal(r.status, 403, client);
      assert.equal(r.headers['x-served-by'], 'portico', 'an error page like any other');
    }
    for (const client of ['192.0.2.8', '198.51.101.1', '2001:db9::1', '10.0.0.1, 192.0.2.7']) {
      assert.equal(
        (
          await request(s.port, '/', {
            headers: { host: 'proxied.test', 'x-forwarded-for': client },
          })
        ).status,
        200,
        client,
      );
    }
  });

  it('ignores X-Forwarded-For where spoofing is not enabled', async () => {
    assert.equal(
      (
        await request(s.port, '/', {
          headers: { host: 'blocked-direct.test', 'x-forwarded-for': '192.0.2.7' },
        })
      ).status,
      200,
    );
  });

  it('refuses a malformed X-Forwarded-For with 400', async () => {
    assert.equal(
      (
        await request(s.port, '/', {
          headers: { host: 'proxied.test', 'x-forwarded-for': 'not-an-ip' },
        })
      ).status,
      400,
    );
    assert.equal(
      (
        await request(s.port, '/', {
          headers: { host: 'proxied.test', 'x-forwarded-for': '1.2.3.4:80' },
        })
      ).status,
      400,
    );
  });

  it('blocks the real client address too (127.0.0.1 here)', async () => {
    const s2 = await startServer(`global:\n  wwwroot: ${www}\n  blocklist: [127.0.0.0/8]\n`);
    try {
      assert.equal((await request(s2.port, '/')).status, 403);
    } finally {
      await s2.close();
    }
  });
});

describe('environmentVariables', () => {
  it('are set in the server process environment at start and on reload', async () => {
    const s = await startServer(
      `global:\n  wwwroot: ${www}\n  environmentVariables:\n    PORTICO_TEST_ENV: first\n`,
    );
    try {
      assert.equal(process.env.PORTICO_TEST_ENV, 'first');
      const { loadConfigText } = await import('../../src/config/load.js');
      const next = loadConfigText(
        `global:\n  port: "127.0.0.1:${s.port}"\n  wwwroot: ${www}\n  environmentVariables:\n    PORTICO_TEST_ENV: second\n`,
        'yaml',
        'reload.yaml',
      );
      await s.server.reload(next.config!);
      assert.equal(process.env.PORTICO_TEST_ENV, 'second');
    } finally {
      await s.close();
      delete process.env.PORTICO_TEST_ENV;
    }
  });
});
