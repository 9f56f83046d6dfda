import assert from 'node:assert/strict';
import { it } from 'node:test';
import { BUILT_IN_TYPES, ContentTypes } from '../../src/static/content-type.js';

it('names text types with charset=utf-8 and others without', () => {
  const expected: Record<string, string | undefined> = {
    '/index.html': 'text/html; charset=utf-8',
    '/a/b.HTM': 'text/html; charset=utf-8',
    '/app.js': 'text/javascript; charset=utf-8',
    '/app.mjs': 'text/javascript; charset=utf-8',
    '/style.css': 'text/css; charset=utf-8',
    '/data.json': 'application/json; charset=utf-8',
    '/app.webmanifest': 'application/manifest+json; charset=utf-8',
    '/notes.txt': 'text/plain; charset=utf-8',
    '/logo.svg': 'image/svg+xml',
    '/feed.xml': 'application/xml',
    '/page.xhtml': 'application/xhtml+xml',
    '/photo.png': 'image/png',
    '/font.woff2': 'font/woff2',
    '/module.wasm': 'application/wasm',
    '/doc.pdf': 'application/pdf',
    '/archive.tar.gz': 'application/gzip',
    '/README': undefined,
    '/file.unknownext': undefined,
    '/.hidden': undefined,
  };
  for (const [name, type] of Object.entries(expected))
    assert.equal(BUILT_IN_TYPES.typeFor(name), type, name);
});

it('takes mimeTypes first, by the last extension in any case, and the built-in table for the rest', () => {
  const types = new ContentTypes({
    '.wasm': 'application/x-custom',
    '.LOG': 'text/plain; charset=utf-8',
  });
  assert.equal(types.typeFor('/module.WASM'), 'application/x-custom');
  assert.equal(types.typeFor('/var/app.log'), 'text/plain; charset=utf-8');
  assert.equal(types.typeFor('/old.log.wasm'), 'application/x-custom');
  assert.equal(types.typeFor('/index.html'), 'text/html; charset=utf-8');
  assert.equal(types.typeFor('/README'), undefined);
  const same = new ContentTypes({
    '.log': 'text/plain; charset=utf-8',
    '.wasm': 'application/x-custom',
  });
  assert.equal(same.id, types.id, 'equal mappings share cache entries');
  assert.notEqual(new ContentTypes({ '.wasm': 'application/wasm' }).id, types.id);
  assert.equal(BUILT_IN_TYPES.id, '');
});
