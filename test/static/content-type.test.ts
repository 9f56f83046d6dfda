import assert from 'node:assert/strict';
import { it } from 'node:test';
import { contentTypeFor } from '../../src/static/content-type.js';

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
    assert.equal(contentTypeFor(name), type, name);
});
