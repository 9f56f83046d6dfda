// How a request path becomes a file, a directory, or an error — through a real HTTP server.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { StaticFiles } from '../../src/static/static-files.js';
import { request } from '../helpers/http.js';
import { startRig, tempDir, type Rig } from './harness.js';

const { dir: base, remove } = tempDir('resolution');
const root = join(base, 'root');

function setUp(): void {
  mkdirSync(join(root, 'docs', 'deep'), { recursive: true });
  writeFileSync(join(root, 'hello.txt'), 'hello\n');
  writeFileSync(join(root, 'index.html'), '<h1>home</h1>');
  writeFileSync(join(root, 'docs', 'readme.md'), '# docs');
  writeFileSync(join(root, 'docs', 'deep', 'x.qqqz'), 'x');
  mkdirSync(join(root, 'htm'));
  writeFileSync(join(root, 'htm', 'index.htm'), 'htm index');
  mkdirSync(join(root, 'xhtml'));
  writeFileSync(join(root, 'xhtml', 'index.xhtml'), 'xhtml index');
  mkdirSync(join(root, 'both', 'index.html'), { recursive: true }); // a directory named like an index
  writeFileSync(join(root, 'both', 'index.htm'), 'the htm one');
  writeFileSync(join(root, 'a b&c.txt'), 'spaced');
  writeFileSync(join(root, 'é.txt'), 'accent');
  writeFileSync(join(root, '.well-known'), 'dotfile');
  writeFileSync(join(root, '<script>&"x'), 'hostile name');
  mkdirSync(join(base, 'outside'));
  writeFileSync(join(base, 'outside', 'secret.txt'), 'secret');
  symlinkSync('/etc', join(root, 'etc-link'));
  symlinkSync(join(base, 'outside'), join(root, 'sibling'));
  symlinkSync('../outside/secret.txt', join(root, 'secret-link.txt'));
  symlinkSync('hello.txt', join(root, 'alias.txt'));
  symlinkSync('docs', join(root, 'docs-alias'));
}

describe('resolution', () => {
  let rig: Rig;
  let listing: Rig;
  before(async () => {
    setUp();
    // Links leaving the root are judged by `never` here: the owners of these test files depend on
    // who runs the tests (ownerMatch and always: test/e2e/symlinks.test.ts).
    const files = new StaticFiles({ followSymlinks: 'never' });
    rig = await startRig({ wwwroot: root }, {}, files);
    listing = await startRig({ wwwroot: root, enableDirectoryListing: true }, {}, files);
  });
  after(async () => {
    await rig.close();
    await listing.close();
    assert.deepEqual(rig.unexpected, []);
    assert.deepEqual(listing.unexpected, []);
    remove();
  });

  it('serves a file with its headers', async () => {
    const reply = await request(rig, '/hello.txt');
    assert.equal(reply.status, 200);
    assert.equal(reply.body.toString(), 'hello\n');
    assert.equal(reply.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(reply.headers['content-length'], '6');
    assert.equal(reply.headers['accept-ranges'], 'bytes');
    assert.match(reply.headers.etag ?? '', /^"[0-9a-f-]+"$/);
    assert.ok(!Number.isNaN(Date.parse(reply.headers['last-modified'] ?? '')));
    assert.equal(reply.headers.vary, undefined, 'too small to compress, so nothing varies');
    assert.equal(reply.headers.server, 'Portico');
  });

  it('answers HEAD with the same headers and no body', async () => {
    const get = await request(rig, '/hello.txt');
    const head = await request(rig, '/hello.txt', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
    for (const name of [
      'content-type',
      'content-length',
      'etag',
      'last-modified',
      'accept-ranges',
    ]) {
      assert.equal(head.headers[name], get.headers[name], name);
    }
  });

  it('serves an unknown extension without Content-Type, and dotfiles', async () => {
    const reply = await request(rig, '/docs/deep/x.qqqz');
    assert.equal(reply.status, 200);
    assert.equal(reply.headers['content-type'], undefined);
    const dot = await request(rig, '/.well-known');
    assert.equal(dot.status, 200);
    assert.equal(dot.headers['content-type'], undefined);
  });

  it('decodes percent-encoded names', async () => {
    assert.equal((await request(rig, '/a%20b%26c.txt')).body.toString(), 'spaced');
    assert.equal((await request(rig, '/%C3%A9.txt')).body.toString(), 'accent');
  });

  it('serves the first index that is a regular file', async () => {
    assert.equal((await request(rig, '/')).body.toString(), '<h1>home</h1>');
    assert.equal((await request(rig, '/')).headers['content-type'], 'text/html; charset=utf-8');
    assert.equal((await request(rig, '/htm/')).body.toString(), 'htm index');
    assert.equal((await request(rig, '/xhtml/')).body.toString(), 'xhtml index');
    assert.equal((await request(rig, '/both/')).body.toString(), 'the htm one');
    assert.equal(
      (await request(rig, '/htm')).body.toString(),
      'htm index',
      'no slash: the redirect is another stage',
    );
  });

  it('follows symlinks that stay inside the root', async () => {
    assert.equal((await request(rig, '/alias.txt')).body.toString(), 'hello\n');
    assert.equal((await request(rig, '/docs-alias/readme.md')).body.toString(), '# docs');
  });

  it('never serves what a symlink outside the root points at: 404, as if absent', async () => {
    for (const path of [
      '/etc-link/passwd',
      '/etc-link/',
      '/etc-link',
      '/sibling/secret.txt',
      '/sibling/',
      '/secret-link.txt',
    ]) {
      const reply = await request(rig, path);
      assert.equal(reply.status, 404, path);
      assert.equal(reply.body.length, 0, path);
      assert.equal((await request(listing, path)).status, 404, `${path} with listing`);
    }
  });

  it('answers 404 for missing paths and for a file used as a directory', async () => {
    assert.equal((await request(rig, '/nope.txt')).status, 404);
    assert.equal((await request(rig, '/hello.txt/')).status, 404);
    assert.equal((await request(rig, '/hello.txt/more')).status, 404);
  });

  it('answers 403 for a directory without index when listing is off', async () => {
    assert.equal((await request(rig, '/docs/')).status, 403);
  });

  it('lists a directory without index when enabled', async () => {
    const reply = await request(listing, '/docs/');
    assert.equal(reply.status, 200);
    assert.equal(reply.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(reply.headers['cache-control'], 'no-cache');
    assert.equal(reply.headers.etag, undefined);
    assert.equal(reply.headers['content-length'], String(reply.body.length));
    const html = reply.body.toString();
    assert.ok(html.includes('<title>Index of /docs/</title>'));
    assert.ok(html.includes('<a href="/">../</a>'));
    assert.ok(html.includes('<a href="/docs/deep/">deep/</a>'));
    assert.ok(html.includes('<a href="/docs/readme.md">readme.md</a>'));
  });

  it('builds correct links for a directory asked for without its slash', async () => {
    const html = (await request(listing, '/docs')).body.toString();
    assert.ok(html.includes('<a href="/docs/readme.md">readme.md</a>'));
    assert.ok(html.includes('<title>Index of /docs/</title>'));
  });

  it('lists the root with escaped names, no dotfiles and no links leaving it', async () => {
    writeFileSync(join(root, 'docs', '.secret'), 'x');
    const rootHtml = (await request(listing, '/both/')).body.toString();
    assert.ok(!rootHtml.includes('Index of'), 'an index wins over the listing');
    const lone = join(root, 'lone');
    mkdirSync(lone);
    writeFileSync(join(lone, '<script>&"x'), 'hostile');
    writeFileSync(join(lone, '.hidden'), 'hidden');
    symlinkSync('/etc', join(lone, 'etc'));
    const html = (await request(listing, '/lone/')).body.toString();
    assert.ok(html.includes('&lt;script&gt;&amp;&quot;x'));
    assert.ok(html.includes('href="/lone/%3Cscript%3E%26%22x"'));
    assert.ok(!html.includes('<script>'));
    assert.ok(!html.includes('.hidden'));
    assert.ok(!html.includes('etc'));
    assert.equal((await request(listing, '/lone/%3Cscript%3E&%22x')).body.toString(), 'hostile');
  });

  it('tells the trailing-slash redirect what a path is, sharing the cache', async () => {
    const files = rig.files;
    assert.equal(await files.kind(root, '/docs'), 'directory');
    assert.equal(await files.kind(root, '/hello.txt'), 'file');
    assert.equal(await files.kind(root, '/nope'), 'missing');
    assert.equal(await files.kind(root, '/etc-link'), 'missing');
    assert.equal(await files.kind(root, '/sibling'), 'missing');
    assert.equal(
      await files.kind(relative(process.cwd(), root), '/docs'),
      'directory',
      'relative wwwroot',
    );
    assert.equal(await files.kind(join(base, 'no-such-root'), '/docs'), 'missing');
  });

  it('answers 404 for everything when wwwroot does not exist', async () => {
    const missing = await startRig({ wwwroot: join(base, 'no-such-root') });
    try {
      assert.equal((await request(missing, '/')).status, 404);
      assert.equal((await request(missing, '/hello.txt')).status, 404);
    } finally {
      await missing.close();
    }
  });

  it('answers 501 for a FIFO', async (t) => {
    const fifo = join(root, 'pipe');
    const made = spawnSync('mkfifo', [fifo]);
    if (made.error || made.status !== 0) {
      if (process.env.CI) assert.fail('mkfifo is needed for this test');
      return t.skip('mkfifo is not available');
    }
    assert.equal(await rig.files.kind(root, '/pipe'), 'other');
    assert.equal((await request(rig, '/pipe')).status, 501);
  });

  it('answers 403 when the file is not readable', async (t) => {
    // Root reads every file; setpriv drops that power for a child process (as test/helpers/cli.ts does).
    const asRoot = process.getuid?.() === 0;
    if (asRoot && spawnSync('setpriv', ['--version']).error) {
      if (process.env.CI) assert.fail('setpriv is needed for this test when run as root');
      return t.skip('running as root without setpriv');
    }
    const locked = join(base, 'locked');
    mkdirSync(join(locked, 'private'), { recursive: true });
    writeFileSync(join(locked, 'private', 'x.txt'), 'x');
    writeFileSync(join(locked, 'closed.txt'), 'closed');
    execFileSync('chmod', ['000', join(locked, 'private'), join(locked, 'closed.txt')]);
    const harness = new URL('./harness.ts', import.meta.url).href;
    const http = new URL('../helpers/http.ts', import.meta.url).href;
    const script =
      `const { startRig } = await import(${JSON.stringify(harness)});` +
      `const { request } = await import(${JSON.stringify(http)});` +
      `const rig = await startRig({ wwwroot: process.argv[1] });` +
      `const out = [];` +
      `for (const p of ['/closed.txt', '/private/x.txt', '/private/']) out.push((await request(rig, p)).status);` +
      `await rig.close(); process.stdout.write(JSON.stringify(out));`;
    const command = [
      process.execPath,
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      script,
      locked,
    ];
    if (asRoot) command.unshift('setpriv', '--bounding-set=-dac_override,-dac_read_search', '--');
    const statuses = execFileSync(command[0]!, command.slice(1), { encoding: 'utf8' });
    execFileSync('chmod', ['755', join(locked, 'private'), join(locked, 'closed.txt')]);
    assert.deepEqual(JSON.parse(statuses), [403, 403, 403]);
  });
});
