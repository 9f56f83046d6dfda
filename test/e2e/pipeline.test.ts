// The request pipeline end to end: URL sanitizer and hostile paths, custom headers, methods,
// trailing-slash redirects, error pages, errorConfig, Server header, malformed requests.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { lchownSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { connect as http2Connect } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { raw, request } from '../helpers/http.js';
import { freePort, startServer, type RunningServer } from '../helpers/server.js';
import { SERVER_CERT, SERVER_KEY, TEST_CA as CA } from '../helpers/tls.js';

const root = mkdtempSync(join(tmpdir(), 'portico-pipeline-'));
const www = join(root, 'www');
const errors = join(root, 'errors');
const outside = join(root, 'outside');
for (const d of [www, errors, outside, join(www, 'docs'), join(www, 'bare')])
  mkdirSync(d, { recursive: true });
writeFileSync(join(www, 'index.html'), '<h1>home</h1>');
writeFileSync(join(www, 'docs', 'index.html'), 'docs index');
writeFileSync(join(www, 'bare', 'note.txt'), 'note');
writeFileSync(join(www, 'a b.txt'), 'spaced');
writeFileSync(join(www, 'café.txt'), 'accent');
writeFileSync(join(outside, 'secret.txt'), 'SECRET');
writeFileSync(join(root, 'secret.txt'), 'SECRET');
writeFileSync(join(errors, '404.html'), '<p>custom not found</p>');
writeFileSync(join(errors, 'only-in-errors.html'), '<p>from errorConfig</p>');
symlinkSync(outside, join(www, 'escape'));
symlinkSync(join(outside, 'secret.txt'), join(www, 'secret-link.txt'));
// Links an uploader made: owned by another user than what they point to (followSymlinks'
// default, ownerMatch, refuses them). Changing a link's owner takes root.
const asRoot = process.getuid?.() === 0;
if (asRoot)
  for (const link of ['escape', 'secret-link.txt']) lchownSync(join(www, link), 65534, 65534);

let s: RunningServer;
before(async () => {
  s = await startServer(`
global:
  wwwroot: ${www}
  serverAdministratorEmail: ops@example.com
  customHeaders:
    X-Frame-Options: DENY
    Link: "<{path}>; rel=canonical"
    Content-Type: "text/evil"
  errorPages:
    - scode: 404
      path: ${join(errors, '404.html')}
    - scode: 404
      path: /nonexistent/never.html
hosts:
  - domain: errcfg.test
    wwwroot: ${www}
    customHeaders:
      X-Frame-Options: SAMEORIGIN
    errorConfig:
      - scode: 404
        wwwroot: ${errors}
  - domain: noslash.test
    wwwroot: ${www}
    disableTrailingSlashRedirects: true
  - domain: allerrors.test
    wwwroot: ${www}
    errorConfig:
      - wwwroot: ${errors}
`);
});
after(async () => {
  await s.close();
  rmSync(root, { recursive: true, force: true });
});

describe('URL sanitizer and hostile paths', () => {
  it('resolves dot segments, encoded or not, without leaving wwwroot', async () => {
    for (const path of [
      '/../../secret.txt',
      '/%2e%2e/%2e%2e/secret.txt',
      '/docs/../../secret.txt',
      '/..%2f..%2fsecret.txt',
      '/.%2E/secret.txt',
    ]) {
      const r = await request(s.port, path);
      assert.equal(r.status, 404, path);
      assert.doesNotMatch(r.text, /SECRET/, path);
    }
    assert.equal((await request(s.port, '/docs/../index.html')).text, '<h1>home</h1>');
  });

  it('refuses NUL and broken escapes with 400', async () => {
    for (const path of [
      '/%00',
      '/index.html%00.txt',
      '/%zz',
      '/a%2',
      '/%c0%ae%c0%ae/secret.txt',
      '/%ff',
    ]) {
      assert.equal((await request(s.port, path)).status, 400, path);
    }
    assert.match(s.stderr(), /URL sanitation error/);
  });

  it('treats %5c as a character, a backslash as a separator, and never escapes', async () => {
    assert.equal((await request(s.port, '/..%5c..%5csecret.txt')).status, 404);
    assert.match(
      await raw(s.port, 'GET /docs\\index.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'),
      /\r\n\r\ndocs index$/,
    );
  });

  it(
    'never follows a symbolic link out of wwwroot whose owner is not its target’s',
    {
      skip: !asRoot && 'changing a link’s owner needs root',
    },
    async () => {
      for (const path of ['/escape/secret.txt', '/secret-link.txt', '/escape/']) {
        const r = await request(s.port, path);
        assert.ok(r.status === 403 || r.status === 404, `${path}: ${r.status}`);
        assert.doesNotMatch(r.text, /SECRET/);
      }
    },
  );

  it('serves names with spaces and non-ASCII characters', async () => {
    assert.equal((await request(s.port, '/a%20b.txt')).text, 'spaced');
    assert.equal((await request(s.port, '/caf%C3%A9.txt')).text, 'accent');
  });
});

describe('headers', () => {
  it('adds Server: Portico and custom headers with {path}, never overriding the response’s own', async () => {
    const r = await request(s.port, '/docs/index.html?x=1');
    assert.equal(r.headers.server, 'Portico');
    assert.equal(r.headers['x-frame-options'], 'DENY');
    assert.equal(r.headers.link, '</docs/index.html>; rel=canonical');
    assert.match(String(r.headers['content-type']), /^text\/html/);
  });

  it('carries custom headers on error pages and redirects too; a host’s value wins over global', async () => {
    const missing = await request(s.port, '/nope');
    assert.equal(missing.headers['x-frame-options'], 'DENY');
    assert.equal(missing.headers.server, 'Portico');
    const redirect = await request(s.port, '/docs');
    assert.equal(redirect.headers['x-frame-options'], 'DENY');
    assert.equal(
      (await request(s.port, '/', { headers: { host: 'errcfg.test' } })).headers['x-frame-options'],
      'SAMEORIGIN',
    );
  });
});

describe('methods', () => {
  it('answers OPTIONS with Allow, serves GET and HEAD, refuses other methods (POST too) with 405 and Allow', async () => {
    const options = await request(s.port, '/', { method: 'OPTIONS' });
    assert.equal(options.status, 204);
    assert.equal(options.headers.allow, 'GET, HEAD, OPTIONS');
    const head = await request(s.port, '/', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
    // nginx's answer to a POST for a file; Ferron 1.x served the file.
    for (const method of ['PUT', 'POST']) {
      const refused = await request(s.port, '/', { method, body: 'a=1' });
      assert.equal(refused.status, 405, method);
      assert.equal(refused.headers.allow, 'GET, HEAD, OPTIONS');
    }
  });

  it('OPTIONS * is 204; any other method with * is 400', async () => {
    // The server as a whole: a location with a module may take POST.
    assert.match(
      await raw(s.port, 'OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'),
      /^HTTP\/1\.1 204 [^]*\r\nAllow: GET, POST, HEAD, OPTIONS\r\n/i,
    );
    assert.match(
      await raw(s.port, 'GET * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'),
      /^HTTP\/1\.1 400 /,
    );
  });
});

describe('trailing slash', () => {
  it('redirects a directory to its slash form, keeping the query', async () => {
    const r = await request(s.port, '/docs?page=2');
    assert.equal(r.status, 301);
    assert.equal(r.headers.location, '/docs/?page=2');
    assert.equal((await request(s.port, '/docs/')).text, 'docs index');
  });

  it('does not redirect with disableTrailingSlashRedirects', async () => {
    const r = await request(s.port, '/docs', { headers: { host: 'noslash.test' } });
    assert.notEqual(r.status, 301);
  });
});

describe('customHeaders', () => {
  it('a Server entry replaces Portico’s; a Cache-Control entry stands on directory listings', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'portico-custom-'));
    mkdirSync(join(dir, 'list'));
    writeFileSync(join(dir, 'list', 'a.txt'), 'a');
    const own = await startServer(
      `global:\n  wwwroot: ${dir}\n  enableDirectoryListing: true\n  customHeaders:\n    Server: edge-1\n    Cache-Control: max-age=60\n`,
    );
    try {
      const listing = await request(own.port, '/list/');
      assert.equal(listing.status, 200);
      assert.equal(listing.headers.server, 'edge-1');
      assert.equal(listing.headers['cache-control'], 'max-age=60');
      assert.equal((await request(own.port, '/missing')).headers.server, 'edge-1');
    } finally {
      await own.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the kept head of a file held in memory or an error page', () => {
  it('carries each location’s own customHeaders, over HTTP/1.1 and HTTP/2, whichever asked before', async () => {
    const sport = await freePort();
    const own = await startServer(
      `global:\n  sport: "127.0.0.1:${sport}"\n  secure: true\n  cert: ${SERVER_CERT}\n  key: ${SERVER_KEY}\n  disableToHTTPSRedirect: true\n  wwwroot: ${www}\n  customHeaders:\n    X-Site: global\nhosts:\n  - domain: a.test\n    customHeaders:\n      X-Site: a\n      Server: edge-a\n  - domain: p.test\n    customHeaders:\n      X-Path: "p={path}"\n    rewriteMap:\n      - regex: "^/alias$"\n        replacement: /bare/note.txt\n`,
    );
    const session = http2Connect(`https://localhost:${sport}`, {
      ca: CA,
      host: '127.0.0.1',
    } as never);
    const h2 = (authority: string, path: string, method = 'GET') =>
      new Promise<Record<string, unknown>>((resolve, reject) => {
        const stream = session.request({
          ':path': path,
          ':authority': authority,
          ':method': method,
        });
        let body = '';
        stream.setEncoding('utf8').on('data', (d: string) => (body += d));
        stream.on('response', (h) => stream.on('end', () => resolve({ ...h, body })));
        stream.on('error', reject);
      });
    try {
      for (let round = 0; round < 3; round++) {
        const a = await request(own.port, '/bare/note.txt', { headers: { host: 'a.test' } });
        assert.equal(a.text, 'note');
        assert.equal(a.headers['x-site'], 'a');
        assert.equal(a.headers.server, 'edge-a');
        assert.equal(a.headers['x-path'], undefined);
        // `{path}` is the request's own (before rewriting): the same file asked for by two paths.
        for (const path of ['/bare/note.txt', '/alias']) {
          const p = await request(own.port, path, { headers: { host: 'p.test' } });
          assert.equal(p.text, 'note');
          assert.equal(p.headers['x-path'], `p=${path}`);
          assert.equal(p.headers.server, 'Portico');
        }
        const other = await request(own.port, '/bare/note.txt', {
          headers: { host: 'other.test' },
        });
        assert.equal(other.headers['x-site'], 'global');
        assert.equal(other.headers.server, 'Portico');

        const a2 = await h2('a.test', '/bare/note.txt');
        assert.equal(a2.body, 'note');
        assert.equal(a2['x-site'], 'a');
        assert.equal(a2.server, 'edge-a');
        assert.equal(a2['content-length'], '4');
        const head = await h2('a.test', '/bare/note.txt', 'HEAD');
        assert.equal(head.body, '');
        assert.equal(head['x-site'], 'a');
        assert.equal(head['content-length'], '4');
        const p2 = await h2('p.test', '/alias');
        assert.equal(p2.body, 'note');
        assert.equal(p2['x-path'], 'p=/alias');
        assert.equal(p2.server, 'Portico');
        assert.equal((await h2('other.test', '/bare/note.txt'))['x-site'], 'global');

        // An error page's head is kept the same way.
        const missingA = await request(own.port, '/gone', { headers: { host: 'a.test' } });
        assert.equal(missingA.status, 404);
        assert.equal(missingA.headers['x-site'], 'a');
        assert.equal(missingA.headers.server, 'edge-a');
        assert.equal(missingA.headers['content-length'], String(missingA.body.length));
        const missingP = await request(own.port, '/gone', { headers: { host: 'p.test' } });
        assert.equal(missingP.headers['x-path'], 'p=/gone');
        assert.equal(missingP.headers.server, 'Portico');
        const missing2 = await h2('a.test', '/gone');
        assert.equal(missing2[':status'], 404);
        assert.equal(missing2['x-site'], 'a');
        assert.equal(
          missing2['content-length'],
          String(Buffer.byteLength(missing2.body as string)),
        );
        const missingHead = await h2('other.test', '/gone', 'HEAD');
        assert.equal(missingHead[':status'], 404);
        assert.equal(missingHead.body, '');
        assert.equal(missingHead['x-site'], 'global');
        assert.equal(missingHead['content-length'], missing2['content-length']);
      }
    } finally {
      session.close();
      await own.close();
    }
  });

  it('carries the current Date over HTTP/2 as over HTTP/1.1, or the one customHeaders set', async (t) => {
    // Portico's clock, moved a second on instead of waiting one.
    t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
    const sport = await freePort();
    const own = await startServer(
      `global:\n  sport: "127.0.0.1:${sport}"\n  secure: true\n  cert: ${SERVER_CERT}\n  key: ${SERVER_KEY}\n  disableToHTTPSRedirect: true\n  wwwroot: ${www}\nhosts:\n  - domain: d.test\n    customHeaders:\n      Date: "Mon, 01 Jan 2001 00:00:00 GMT"\n`,
    );
    const session = http2Connect(`https://localhost:${sport}`, {
      ca: CA,
      host: '127.0.0.1',
    } as never);
    const h2Date = (authority: string, path: string, method = 'GET') =>
      new Promise<unknown>((resolve, reject) => {
        const stream = session.request({
          ':path': path,
          ':authority': authority,
          ':method': method,
        });
        stream.on('response', (h) => resolve(h.date));
        stream.on('error', reject);
        stream.resume();
      });
    // Within the second before and the second after the request (Date has second resolution).
    const isNow = (date: unknown, label: string) => {
      assert.equal(typeof date, 'string', label);
      const at = Date.parse(date as string);
      assert.ok(Math.abs(at - Date.now()) < 2000, `${label}: ${String(date)}`);
    };
    try {
      // A kept file head, a kept error page, a 301 and HEAD: each gets the current Date.
      const first = await h2Date('x.test', '/bare/note.txt');
      isNow(first, 'file');
      isNow(await h2Date('x.test', '/gone'), '404');
      isNow(await h2Date('x.test', '/docs'), '301');
      isNow(await h2Date('x.test', '/bare/note.txt', 'HEAD'), 'HEAD');
      // Node writes HTTP/1.1's Date by the real clock, which the tick below leaves behind.
      isNow((await request(own.port, '/bare/note.txt')).headers.date, 'HTTP/1.1');
      // The kept head's Date moves on with the clock.
      t.mock.timers.tick(1100);
      const later = await h2Date('x.test', '/bare/note.txt');
      isNow(later, 'file, a second later');
      assert.notEqual(later, first);
      // customHeaders' Date stands, over both protocols.
      assert.equal(await h2Date('d.test', '/bare/note.txt'), 'Mon, 01 Jan 2001 00:00:00 GMT');
      assert.equal(await h2Date('d.test', '/gone'), 'Mon, 01 Jan 2001 00:00:00 GMT');
      const h1 = await request(own.port, '/bare/note.txt', { headers: { host: 'd.test' } });
      assert.equal(h1.headers.date, 'Mon, 01 Jan 2001 00:00:00 GMT');
    } finally {
      session.close();
      await own.close();
    }
  });

  it('frames every HTTP/1.1 response on one connection: keep-alive, HEAD, then the close', async () => {
    // Three requests sent at once on one connection: a file, its HEAD, then a 404 page that asks to
    // close. Each head is the one kept for it (no `{path}` in customHeaders), written as Node writes
    // any head.
    const own = await startServer(
      `global:\n  wwwroot: ${www}\n  customHeaders:\n    X-Frame-Options: DENY\n  errorPages:\n    - scode: 404\n      path: ${join(errors, '404.html')}\n`,
    );
    let text: string;
    try {
      text = await raw(
        own.port,
        'GET /bare/note.txt HTTP/1.1\r\nHost: a.test\r\n\r\n' +
          'HEAD /bare/note.txt HTTP/1.1\r\nHost: a.test\r\n\r\n' +
          'GET /gone HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n',
      );
    } finally {
      await own.close();
    }
    const [file, head, missing] = text.split(/(?=HTTP\/1\.1 )/);
    for (const reply of [file!, head!, missing!]) {
      assert.match(reply, /\r\nDate: [A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} [\d:]{8} GMT\r\n/);
      assert.match(reply, /\r\nX-Frame-Options: DENY\r\n/);
      assert.match(reply, /\r\nServer: Portico\r\n/);
    }
    assert.match(file!, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(
      file!,
      /\r\nContent-Length: 4\r\n[^]*\r\nConnection: keep-alive\r\nKeep-Alive: timeout=\d+\r\n\r\nnote$/,
    );
    assert.match(head!, /^HTTP\/1\.1 200 OK\r\n(?:[^]*\r\n)?Content-Length: 4\r\n[^]*\r\n\r\n$/);
    assert.match(
      missing!,
      /^HTTP\/1\.1 404 Not Found\r\n[^]*\r\nConnection: close\r\n\r\n<p>custom not found<\/p>$/,
    );
  });
});

describe('error pages', () => {
  it('serves the first readable errorPages file with the error status', async () => {
    const r = await request(s.port, '/missing.html');
    assert.equal(r.status, 404);
    assert.equal(r.text, '<p>custom not found</p>');
    assert.match(String(r.headers['content-type']), /^text\/html/);
  });

  it('reads errorPages files through the static file cache: edits show, a FIFO or a huge file is never read', async (t) => {
    // The cache's clock, moved past its revalidation interval instead of waiting.
    t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
    const dir = mkdtempSync(join(tmpdir(), 'portico-errpages-'));
    const page = join(dir, 'page.html');
    const fifo = join(dir, 'fifo.html');
    const huge = join(dir, 'huge.html');
    writeFileSync(page, 'first');
    writeFileSync(huge, Buffer.alloc(2 * 1024 * 1024, 97));
    const site = join(dir, 'site');
    mkdirSync(join(site, 'empty'), { recursive: true });
    const fifoMade = spawnSync('mkfifo', [fifo]).status === 0;
    const own = await startServer(
      `global:\n  wwwroot: ${site}\n  errorPages:\n    - scode: 404\n      path: ${page}\n    - scode: 403\n      path: ${fifo}\n    - scode: 405\n      path: ${huge}\n`,
    );
    try {
      assert.equal((await request(own.port, '/missing')).text, 'first');
      writeFileSync(page, 'second, longer');
      t.mock.timers.tick(1100);
      assert.equal((await request(own.port, '/missing')).text, 'second, longer');
      const tooBig = await request(own.port, '/', { method: 'DELETE' });
      assert.equal(tooBig.status, 405);
      assert.match(tooBig.text, /<title>405 Method Not Allowed<\/title>/);
      assert.match(own.stderr(), /Cannot use error page .*huge\.html: larger than 1048576 bytes/);
      if (fifoMade) {
        // A directory without an index: 403, whose page is a FIFO nobody writes to.
        const r = await request(own.port, '/empty/');
        assert.equal(r.status, 403);
        assert.match(r.text, /<title>403 Forbidden<\/title>/, 'the default page, at once');
        assert.match(own.stderr(), /Cannot use error page .*fifo\.html: not a regular file/);
      }
    } finally {
      await own.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('renders the default page with status and reason; the administrator contact is for a 500 only', async () => {
    const r = await request(s.port, '/', { method: 'DELETE' });
    assert.equal(r.status, 405);
    assert.match(r.text, /<title>405 Method Not Allowed<\/title>/);
    assert.doesNotMatch(r.text, /ops@example\.com/);
    assert.match(String(r.headers['content-type']), /^text\/html; charset=utf-8$/);
    assert.equal(Number(r.headers['content-length']), r.body.length);
  });

  it('an errorConfig re-runs the chain with its settings and keeps the error status', async () => {
    const r = await request(s.port, '/only-in-errors.html', { headers: { host: 'errcfg.test' } });
    assert.equal(r.status, 404);
    assert.equal(r.text, '<p>from errorConfig</p>');
    const none = await request(s.port, '/nowhere.html', { headers: { host: 'errcfg.test' } });
    assert.equal(none.status, 404);
    assert.equal(
      none.text,
      '<p>custom not found</p>',
      'nothing there either: the error page of the status',
    );
  });

  it('an errorConfig without scode takes every error, whatever the method, keeping the status and Allow', async () => {
    const r = await request(s.port, '/only-in-errors.html', {
      method: 'DELETE',
      headers: { host: 'allerrors.test' },
    });
    assert.equal(r.status, 405);
    assert.equal(r.headers.allow, 'GET, HEAD, OPTIONS');
    assert.equal(r.text, '<p>from errorConfig</p>');
  });

  it('HEAD of an error has headers and no body', async () => {
    const r = await request(s.port, '/missing', { method: 'HEAD' });
    assert.equal(r.status, 404);
    assert.equal(r.body.length, 0);
    assert.ok(Number(r.headers['content-length']) > 0);
  });
});

describe('malformed requests', () => {
  it('refuses a Host header with control or non-ASCII bytes', async () => {
    assert.match(
      await raw(s.port, 'GET / HTTP/1.1\r\nHost: ex\x7fample\r\nConnection: close\r\n\r\n'),
      /^HTTP\/1\.1 400 /,
    );
  });

  it('answers garbage with 400 and closes', async () => {
    assert.match(await raw(s.port, 'HELLO THERE\r\n\r\n'), /^HTTP\/1\.1 400 Bad Request/);
  });

  it('accepts the absolute form of the request target', async () => {
    assert.match(
      await raw(
        s.port,
        'GET http://anything.test/docs/ HTTP/1.1\r\nHost: anything.test\r\nConnection: close\r\n\r\n',
      ),
      /\r\n\r\ndocs index$/,
    );
  });
});
