// indexFiles and mimeTypes on real requests: a directory served by the first index file of the
// list that exists, a location's list replacing its host's (an empty one serving none), files
// typed by the host's mimeTypes while another host serving the same folder keeps the built-in
// types (the file cache keeps their entries apart), and today's behaviour without either.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { request } from '../helpers/http.js';
import { startServer, type RunningServer } from '../helpers/server.js';

const www = mkdtempSync(join(tmpdir(), 'portico-index-mime-'));
const file = (name: string, text: string) => {
  mkdirSync(join(www, name, '..'), { recursive: true });
  writeFileSync(join(www, name), text);
};
file('both/index.html', 'html index');
file('both/default.htm', 'default page');
file('only-html/index.html', 'only html');
file('sub/both/index.html', 'sub html');
file('sub/both/index.htm', 'sub htm');
file('data.foo', 'foo data');
file('style.css', 'body {}');
file('NOTES.Rec', 'a record');
file('app.js', 'let a;');

let s: RunningServer;
before(async () => {
  s = await startServer(`
hosts:
  - domain: custom.test
    wwwroot: ${www}
    indexFiles: [default.htm, index.html]
    mimeTypes:
      .foo: application/x-foo
      .css: "text/plain; charset=utf-8"
      .rec: "text/plain; charset=utf-8"
    locations:
      - path: /sub
        indexFiles: index.htm
      - path: /only-html
        indexFiles: []
  - domain: plain.test
    wwwroot: ${www}
`);
});
after(async () => {
  await s?.close();
  rmSync(www, { recursive: true, force: true });
});

const get = (host: string, path: string) => request(s.port, path, { headers: { host } });

describe('indexFiles', () => {
  it('serves the first index file of the list that exists', async () => {
    const both = await get('custom.test', '/both/');
    assert.deepEqual([both.status, both.text], [200, 'default page']);
    assert.equal(both.headers['content-type'], 'text/html; charset=utf-8');
    const onlyHtml = await get('custom.test', '/only-html/');
    assert.equal(onlyHtml.status, 403, 'the location’s empty list serves no index file');
    const sub = await get('custom.test', '/sub/both/');
    assert.deepEqual([sub.status, sub.text], [200, 'sub htm'], 'the location’s list replaced');
  });

  it('keeps the built-in order (index.html, index.htm, index.xhtml) without it', async () => {
    assert.equal((await get('plain.test', '/both/')).text, 'html index');
    assert.equal((await get('plain.test', '/only-html/')).text, 'only html');
    assert.equal((await get('plain.test', '/sub/both/')).text, 'sub html');
  });
});

describe('mimeTypes', () => {
  it('types files by the host’s table, the built-in one for the rest, the same files unchanged for another host', async () => {
    // Alternately, so that each host's entries are looked up while the other's are cached.
    for (let i = 0; i < 2; i++) {
      const custom = {
        foo: await get('custom.test', '/data.foo'),
        css: await get('custom.test', '/style.css'),
        rec: await get('custom.test', '/NOTES.Rec'),
        js: await get('custom.test', '/app.js'),
      };
      const plain = {
        foo: await get('plain.test', '/data.foo'),
        css: await get('plain.test', '/style.css'),
        rec: await get('plain.test', '/NOTES.Rec'),
        js: await get('plain.test', '/app.js'),
      };
      assert.equal(custom.foo.headers['content-type'], 'application/x-foo');
      assert.equal(custom.css.headers['content-type'], 'text/plain; charset=utf-8');
      assert.equal(custom.rec.headers['content-type'], 'text/plain; charset=utf-8');
      assert.equal(custom.js.headers['content-type'], 'text/javascript; charset=utf-8');
      assert.equal(plain.foo.headers['content-type'], undefined, 'an unknown extension: none');
      assert.equal(plain.css.headers['content-type'], 'text/css; charset=utf-8');
      assert.equal(plain.rec.headers['content-type'], undefined);
      assert.equal(plain.js.headers['content-type'], 'text/javascript; charset=utf-8');
      assert.equal(custom.foo.text, 'foo data');
      assert.equal(plain.foo.text, 'foo data');
    }
  });
});
