// Locations that match more than a prefix, as users meet them: a real server, node:http backends on
// 127.0.0.1, and curl, fetch and node:http as clients. A conditional location (pathRegex,
// matchMethods, matchHeaders, matchQuery) beats the longest prefix; among them the first in file
// order wins; none matching leaves the request to the prefix location.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { request } from '../helpers/http.js';
import { startServer, type RunningServer } from '../helpers/server.js';

const run = promisify(execFile);
const HAS_CURL = spawnSync('curl', ['--version']).status === 0;

/** A backend that answers with its name, the method and the URL it was asked for. */
async function backend(name: string): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    res.setHeader('Content-Type', 'text/plain');
    res.end(`${name} ${req.method} ${req.url}`);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('locations with conditions', () => {
  const root = mkdtempSync(join(tmpdir(), 'portico-conditions-'));
  let s: RunningServer;
  let a: Awaited<ReturnType<typeof backend>>;
  let b: Awaited<ReturnType<typeof backend>>;

  before(async () => {
    for (const [path, text] of Object.entries({
      'index.html': 'home',
      'style.css': 'body{}',
      'app.js': 'app()',
      'static/app.css': 'static css',
      'static/notes.txt': 'static notes',
    })) {
      mkdirSync(join(root, path, '..'), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    a = await backend('A');
    b = await backend('B');
    s = await startServer(`
global:
  loadModules: [rproxy]
hosts:
  - domain: "*"
    wwwroot: ${root}
    locations:
      - path: /static
        customHeaders:
          Cache-Control: no-cache
      - pathRegex: "\\\\.css$"
        customHeaders:
          Cache-Control: "public, max-age=31536000, immutable"
      - pathRegex: "\\\\.(css|js)$"
        customHeaders:
          X-Second: "yes"
      - path: /api
        matchMethods: [POST, PUT]
        proxyTo: ${b.url}
      - path: /api
        proxyTo: ${a.url}
      - path: /api
        matchHeaders:
          x-canary: "^on$"
        proxyTo: ${b.url}
      - path: /search
        proxyTo: ${a.url}
      - path: /search
        matchQuery:
          format: "^json$"
        proxyTo: ${b.url}
      - matchHeaders:
          X-Debug: "^1$"
        proxyTo: ${b.url}
`);
  });
  after(async () => {
    await s?.close();
    a?.server.close();
    b?.server.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('an extension location beats the prefix location, with its own Cache-Control (curl)', async (t) => {
    if (!HAS_CURL) {
      assert.ok(!process.env.CI, 'curl is needed under CI');
      return t.skip('curl is not installed');
    }
    const head = async (path: string) =>
      (await run('curl', ['-sS', '-D', '-', '-o', '/dev/null', s.url + path])).stdout;
    const css = await head('/static/app.css');
    assert.match(css, /^HTTP\/1\.1 200/);
    assert.match(css, /\r\ncache-control: public, max-age=31536000, immutable\r\n/i);
    assert.doesNotMatch(css, /no-cache/);
    // The prefix location still answers what no condition takes.
    const txt = await head('/static/notes.txt');
    assert.match(txt, /^HTTP\/1\.1 200/);
    assert.match(txt, /\r\ncache-control: no-cache\r\n/i);
    const body = await run('curl', ['-sS', `${s.url}/static/app.css`]);
    assert.equal(body.stdout, 'static css');
  });

  it('the first conditional location in file order wins (fetch)', async () => {
    const css = await fetch(`${s.url}/style.css`);
    assert.equal(await css.text(), 'body{}');
    assert.equal(css.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(css.headers.get('x-second'), null, 'the second .css pattern is never reached');
    const js = await fetch(`${s.url}/app.js`);
    assert.equal(await js.text(), 'app()');
    assert.equal(js.headers.get('x-second'), 'yes');
    assert.equal(js.headers.get('cache-control'), null);
  });

  it('matchMethods sends POST and PUT elsewhere than GET', async () => {
    const get = await request(s.port, '/api/items?x=1');
    assert.equal(get.text, 'A GET /api/items?x=1');
    const post = await request(s.port, '/api/items', { method: 'POST', body: '{}' });
    assert.equal(post.text, 'B POST /api/items');
    const put = await request(s.port, '/api', { method: 'PUT', body: '{}' });
    assert.equal(put.text, 'B PUT /api');
    const del = await request(s.port, '/api', { method: 'DELETE' });
    assert.equal(del.text, 'A DELETE /api');
    // The condition's path: a POST outside /api is not taken by it.
    const outside = await request(s.port, '/apix', { method: 'POST' });
    assert.equal(outside.status, 405, "the host's static files answer it");
  });

  it('matchHeaders compares names case-insensitively and the value by its pattern', async () => {
    const on = await request(s.port, '/api/x', { headers: { 'X-Canary': 'on' } });
    assert.equal(on.text, 'B GET /api/x');
    const off = await request(s.port, '/api/x', { headers: { 'X-Canary': 'off' } });
    assert.equal(off.text, 'A GET /api/x');
    const none = await request(s.port, '/api/x');
    assert.equal(none.text, 'A GET /api/x');
  });

  it('matchQuery reads the decoded parameter; absent is no match', async () => {
    const json = await request(s.port, '/search?q=a&format=json');
    assert.equal(json.text, 'B GET /search?q=a&format=json');
    const encoded = await request(s.port, '/search?format=%6Ason');
    assert.equal(encoded.text, 'B GET /search?format=%6Ason');
    const html = await request(s.port, '/search?format=html');
    assert.equal(html.text, 'A GET /search?format=html');
    const none = await request(s.port, '/search?q=json');
    assert.equal(none.text, 'A GET /search?q=json');
  });

  it('a location with only conditions takes any path when they hold, else the prefix one answers', async () => {
    const debug = await request(s.port, '/static/notes.txt', {
      headers: { 'X-Debug': '1' },
    });
    assert.equal(debug.text, 'B GET /static/notes.txt');
    const plain = await request(s.port, '/static/notes.txt');
    assert.equal(plain.text, 'static notes');
    assert.equal(plain.headers['cache-control'], 'no-cache');
    const home = await request(s.port, '/');
    assert.equal(home.text, 'home');
  });
});
