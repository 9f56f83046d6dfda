// Content-coding through a real HTTP server: every coding, q-values, and what is never compressed.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import zlib from 'node:zlib';
import { request, type Reply } from '../helpers/http.js';
import { startRig, tempDir, type Rig } from './harness.js';

const { dir: root, remove } = tempDir('compression');
const TEXT = Buffer.from(
  Array.from({ length: 3000 }, (_, i) => `line ${i}: the quick brown fox\n`).join(''),
);

const APP = Buffer.from('console.log("precompressed");\n'.repeat(400));
// Made with other settings than Portico's, so a copy served as is can be told from one made here.
const APP_BR = zlib.brotliCompressSync(APP, {
  params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1 },
});
const APP_GZ = zlib.gzipSync(APP, { level: 1 });
const DATA = Buffer.alloc(5000, 7);
const STALE_CSS = Buffer.from('body { color: red }\n'.repeat(100));
const OLD_GZ = zlib.gzipSync(Buffer.from('body { color: blue }\n'.repeat(100)));

function decode(reply: Reply): Buffer {
  switch (reply.headers['content-encoding']) {
    case 'br':
      return zlib.brotliDecompressSync(reply.body);
    case 'gzip':
      return zlib.gunzipSync(reply.body);
    case 'deflate':
      return zlib.inflateSync(reply.body);
    default:
      return reply.body;
  }
}

before(() => {
  writeFileSync(join(root, 'text.txt'), TEXT);
  writeFileSync(join(root, 'image.png'), TEXT); // compressible bytes, but the name says image
  writeFileSync(join(root, 'font.woff2'), TEXT);
  writeFileSync(join(root, 'tiny.txt'), 'x'.repeat(256));
  writeFileSync(join(root, 'small.txt'), 'x'.repeat(257));
  writeFileSync(join(root, 'noise.bin'), randomBytes(4096));
  writeFileSync(join(root, 'LICENSE'), TEXT);
  writeFileSync(join(root, 'app.js'), APP);
  writeFileSync(join(root, 'app.js.br'), APP_BR);
  writeFileSync(join(root, 'app.js.gz'), APP_GZ);
  writeFileSync(join(root, 'data.bin'), DATA);
  writeFileSync(join(root, 'data.bin.gz'), zlib.gzipSync(DATA));
  writeFileSync(join(root, 'stale.css.gz'), OLD_GZ);
  const past = new Date(Date.now() - 3_600_000);
  utimesSync(join(root, 'stale.css.gz'), past, past);
  writeFileSync(join(root, 'stale.css'), STALE_CSS);
});
after(remove);

for (const [label, options] of [
  ['cached in memory', {}],
  ['streamed from disk', { maxCachedFileSize: 0 }],
] as const) {
  describe(`compression, ${label}`, () => {
    let rig: Rig;
    before(async () => {
      rig = await startRig({ wwwroot: root }, options);
    });
    after(async () => {
      await rig.close();
      assert.deepEqual(rig.unexpected, []);
    });

    const cases: [string, string | undefined][] = [
      ['br', 'br'],
      ['gzip', 'gzip'],
      ['deflate', 'deflate'],
      ['gzip, deflate, br, zstd', 'br'],
      ['br;q=0.5, gzip;q=0.9, deflate;q=0.1', 'gzip'],
      ['gzip;q=0.3, deflate;q=0.7', 'deflate'],
      ['br;q=0, gzip;q=0, deflate;q=0', undefined],
      ['*;q=0.5, br;q=0', 'gzip'],
      ['identity', undefined],
      ['identity;q=1, br;q=0.5', undefined],
    ];
    for (const [accept, expected] of cases) {
      it(`Accept-Encoding: ${accept} → ${expected ?? 'identity'}`, async () => {
        const reply = await request(rig, '/text.txt', { headers: { 'accept-encoding': accept } });
        assert.equal(reply.status, 200);
        assert.equal(reply.headers['content-encoding'], expected);
        assert.equal(reply.headers.vary, 'Accept-Encoding');
        assert.deepEqual(decode(reply), TEXT);
        if (expected !== undefined) {
          assert.ok(reply.body.length < TEXT.length / 4, 'actually compressed');
          assert.match(reply.headers.etag ?? '', new RegExp(`-${expected}"$`));
          if (label === 'cached in memory')
            assert.equal(reply.headers['content-length'], String(reply.body.length));
          else assert.equal(reply.headers['transfer-encoding'], 'chunked');
        } else {
          assert.equal(reply.headers['content-length'], String(TEXT.length));
        }
      });
    }

    it('sends HEAD with the headers GET would send', async () => {
      const get = await request(rig, '/text.txt', { headers: { 'accept-encoding': 'gzip' } });
      const head = await request(rig, '/text.txt', {
        method: 'HEAD',
        headers: { 'accept-encoding': 'gzip' },
      });
      assert.equal(head.body.length, 0);
      for (const name of ['content-encoding', 'content-length', 'etag', 'vary'])
        assert.equal(head.headers[name], get.headers[name], name);
    });

    it('never compresses images, fonts, bodies of 256 bytes or less, or ranges', async () => {
      const all = { 'accept-encoding': 'br, gzip, deflate' };
      for (const path of ['/image.png', '/font.woff2', '/tiny.txt']) {
        const reply = await request(rig, path, { headers: all });
        assert.equal(reply.headers['content-encoding'], undefined, path);
        assert.equal(reply.headers.vary, undefined, path);
      }
      assert.equal(
        (await request(rig, '/small.txt', { headers: all })).headers['content-encoding'],
        'br',
        '257 bytes is enough',
      );
      const range = await request(rig, '/text.txt', { headers: { ...all, range: 'bytes=0-99' } });
      assert.equal(range.status, 206);
      assert.equal(range.headers['content-encoding'], undefined);
      assert.deepEqual(range.body, TEXT.subarray(0, 100));
    });

    it('compresses nothing when enableCompression is false', async () => {
      const off = await startRig({ wwwroot: root, enableCompression: false }, options);
      try {
        const reply = await request(off, '/text.txt', {
          headers: { 'accept-encoding': 'br, gzip' },
        });
        assert.equal(reply.headers['content-encoding'], undefined);
        assert.equal(reply.headers.vary, undefined);
        assert.deepEqual(reply.body, TEXT);
      } finally {
        await off.close();
      }
    });

    it('sends binaries and unknown types as they are, with their length (issue 16 point 5)', async () => {
      for (const path of ['/noise.bin', '/LICENSE']) {
        const reply = await request(rig, path, { headers: { 'accept-encoding': 'br, gzip' } });
        assert.equal(reply.headers['content-encoding'], undefined, path);
        assert.equal(reply.headers.vary, undefined, path);
        assert.equal(reply.headers['content-length'], String(reply.body.length), path);
      }
      const bin = await request(rig, '/noise.bin', { headers: { 'accept-encoding': 'gzip' } });
      assert.equal(bin.body.length, 4096);
    });

    describe('precompressed files beside the original', () => {
      it('serves app.js.br or app.js.gz byte for byte, in the client’s order of preference', async () => {
        for (const [accept, encoding, file] of [
          ['br, gzip', 'br', APP_BR],
          ['gzip;q=1, br;q=0.5', 'gzip', APP_GZ],
          ['gzip', 'gzip', APP_GZ],
        ] as const) {
          const reply = await request(rig, '/app.js', { headers: { 'accept-encoding': accept } });
          assert.equal(reply.status, 200);
          assert.equal(reply.headers['content-encoding'], encoding, accept);
          assert.deepEqual(reply.body, file, 'the file itself, not a compression of app.js');
          assert.deepEqual(decode(reply), APP);
          assert.equal(reply.headers['content-length'], String(file.length));
          assert.equal(reply.headers['content-type'], 'text/javascript; charset=utf-8');
          assert.equal(reply.headers.vary, 'Accept-Encoding');
          assert.match(reply.headers.etag ?? '', new RegExp(`-${encoding}"$`));
          const revalidated = await request(rig, '/app.js', {
            headers: { 'accept-encoding': accept, 'if-none-match': reply.headers.etag! },
          });
          assert.equal(revalidated.status, 304);
          const head = await request(rig, '/app.js', {
            method: 'HEAD',
            headers: { 'accept-encoding': accept },
          });
          assert.equal(head.headers['content-length'], String(file.length));
        }
        const plain = await request(rig, '/app.js');
        assert.deepEqual([plain.headers['content-encoding'], plain.body], [undefined, APP]);
        const range = await request(rig, '/app.js', {
          headers: { 'accept-encoding': 'br', range: 'bytes=0-9' },
        });
        assert.deepEqual([range.status, range.body], [206, APP.subarray(0, 10)]);
      });

      it('serves a precompressed binary that is not compressed on the fly', async () => {
        const reply = await request(rig, '/data.bin', { headers: { 'accept-encoding': 'gzip' } });
        assert.equal(reply.headers['content-encoding'], 'gzip');
        assert.deepEqual(decode(reply), DATA);
      });

      it('passes over a copy older than the file (a leftover of an earlier version)', async () => {
        const reply = await request(rig, '/stale.css', {
          headers: { 'accept-encoding': 'gzip' },
        });
        assert.equal(reply.headers['content-encoding'], 'gzip');
        assert.deepEqual(decode(reply), STALE_CSS, 'compressed from the current file');
        assert.notDeepEqual(reply.body, OLD_GZ);
      });
    });
  });
}
