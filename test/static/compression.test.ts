import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import zlib from 'node:zlib';
import { ZSTD } from '../../src/http/zstd.js';
import { compressBuffer, isCompressible } from '../../src/static/compression.js';

describe('isCompressible', () => {
  it('refuses the reference list of extensions, case-insensitively', () => {
    for (const name of [
      '/a.png',
      '/a.JPG',
      '/a.zip',
      '/a.mp4',
      '/a.pdf',
      '/a.gz',
      '/a.woff2.gz',
      '/a.docx',
    ]) {
      assert.equal(isCompressible(name, undefined), false, name);
    }
  });

  it('refuses compressed content types the list misses', () => {
    assert.equal(isCompressible('/a.webp', 'image/webp'), false);
    assert.equal(isCompressible('/a.woff2', 'font/woff2'), false);
    assert.equal(isCompressible('/a.woff', 'font/woff'), false);
    assert.equal(isCompressible('/a.flac', 'audio/flac'), false);
    assert.equal(isCompressible('/a.rar', 'application/vnd.rar'), false);
  });

  it('compresses only what the list names: unknown types and binaries go as they are', () => {
    assert.equal(isCompressible('/LICENSE', undefined), false);
    assert.equal(isCompressible('/a.bin', 'application/octet-stream'), false);
    assert.equal(isCompressible('/a.exe', 'application/x-msdownload'), false);
    assert.equal(isCompressible('/a.svgz', 'image/svg+xml'), false);
    assert.equal(isCompressible('/a.webmanifest', 'application/manifest+json'), true);
    assert.equal(isCompressible('/feed', 'application/atom+xml; charset=utf-8'), true);
    assert.equal(isCompressible('/a.csv', 'Text/CSV'), true);
  });

  it('compresses text, SVG, icons, fonts other than WOFF', () => {
    assert.equal(isCompressible('/a.html', 'text/html; charset=utf-8'), true);
    assert.equal(isCompressible('/a.js', 'text/javascript; charset=utf-8'), true);
    assert.equal(isCompressible('/a.svg', 'image/svg+xml'), true);
    assert.equal(isCompressible('/favicon.ico', 'image/vnd.microsoft.icon'), true);
    assert.equal(isCompressible('/a.ttf', 'font/ttf'), true);
    assert.equal(isCompressible('/a.wasm', 'application/wasm'), true);
  });
});

describe('compressBuffer', () => {
  it('round-trips every coding', async () => {
    const body = Buffer.from('portico '.repeat(10_000));
    assert.deepEqual(zlib.brotliDecompressSync(await compressBuffer(body, 'br')), body);
    assert.deepEqual(zlib.gunzipSync(await compressBuffer(body, 'gzip')), body);
    assert.deepEqual(zlib.inflateSync(await compressBuffer(body, 'deflate')), body);
  });

  it('round-trips zstd where this Node has it', async (t) => {
    if (ZSTD === undefined) return t.skip(`Node ${process.version} has no zstd`);
    const body = Buffer.from('portico '.repeat(10_000));
    const decompress = (zlib as unknown as { zstdDecompressSync(b: Buffer): Buffer })
      .zstdDecompressSync;
    assert.deepEqual(decompress(await compressBuffer(body, 'zstd')), body);
  });
});
