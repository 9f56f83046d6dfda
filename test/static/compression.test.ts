import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import zlib from 'node:zlib';
import {
  acceptedEncodings,
  compressBuffer,
  isCompressible,
  negotiateEncoding,
} from '../../src/static/compression.js';

describe('negotiateEncoding', () => {
  const cases: [string | undefined, string | undefined][] = [
    [undefined, undefined],
    ['', undefined],
    ['gzip, deflate, br', 'br'],
    ['gzip, deflate', 'gzip'],
    ['deflate', 'deflate'],
    ['x-gzip', 'gzip'],
    ['GZIP', 'gzip'],
    ['br;q=0.5, gzip', 'gzip'],
    ['br;q=0.5, gzip;q=0.5, deflate;q=0.5', 'br'],
    ['gzip;q=0.2, deflate;q=0.8', 'deflate'],
    ['br;q=0, gzip;q=0', undefined],
    ['br;q=0', undefined],
    ['*', 'br'],
    ['*;q=0.5, br;q=0', 'gzip'],
    ['*;q=0', undefined],
    ['identity', undefined],
    ['identity;q=1, gzip;q=0.5', undefined],
    ['identity;q=0.5, gzip;q=0.5', 'gzip'],
    ['identity;q=0, gzip', 'gzip'],
    ['gzip ; q=0.800, br ; q=0.799', 'gzip'],
    ['gzip;q=1.0', 'gzip'],
    ['br;q=2, gzip', 'gzip'], // a broken weight drops the member
    ['br;q=0.5, br;q=1', 'br'],
    ['zstd, compress', undefined],
  ];
  for (const [header, expected] of cases) {
    it(`${JSON.stringify(header)} → ${expected ?? 'identity'}`, () => {
      assert.equal(negotiateEncoding(header), expected);
      assert.equal(negotiateEncoding(header), expected, 'memoized answer');
    });
  }
});

describe('acceptedEncodings', () => {
  it('lists what a client accepts, best first, ties in br, gzip, deflate order', () => {
    assert.deepEqual(acceptedEncodings('gzip, br'), ['br', 'gzip']);
    assert.deepEqual(acceptedEncodings('gzip;q=1, br;q=0.5, deflate;q=0'), ['gzip', 'br']);
    assert.deepEqual(acceptedEncodings('*;q=0.1, gzip'), ['gzip', 'br', 'deflate']);
    assert.deepEqual(acceptedEncodings('identity;q=1, gzip;q=0.5'), []);
    assert.deepEqual(acceptedEncodings(undefined), []);
  });
});

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
});
