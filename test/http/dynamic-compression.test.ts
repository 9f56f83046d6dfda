// What dynamic compression decides at a response's head: which responses are coded, which only
// vary, which are left alone, and what the head becomes (Vary merged, Content-Length gone, ETag weak,
// Content-Encoding); and that what it codes decodes to the body, flushed when the writer pauses.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import zlib from 'node:zlib';
import { DynamicCompression, MIN_COMPRESSED_SIZE } from '../../src/http/dynamic-compression.js';
import { deflateWindow } from '../../src/http/stream-compressors.js';
import { fakeCtx } from '../helpers/ctx.js';

const HTML = ['Content-Type', 'text/html; charset=utf-8'];

function decide(
  status: number,
  headers: string[],
  request: Record<string, string> = { 'accept-encoding': 'gzip, br' },
  length?: number,
) {
  const { ctx } = fakeCtx({ headers: request });
  const coding = new DynamicCompression(false).head(ctx, status, headers, length);
  coding?.stream.destroy();
  return { coding, headers };
}

describe('dynamic compression: the head', () => {
  it('codes a compressible response: Content-Encoding, Vary, no Content-Length, weak ETag', () => {
    const { coding, headers } = decide(200, [
      ...HTML,
      'Content-Length',
      '5000',
      'Accept-Ranges',
      'bytes',
      'ETag',
      '"v1"',
    ]);
    assert.ok(coding);
    // Accept-Ranges goes too: a range is never coded, so none can be joined to coded bytes.
    assert.deepEqual(headers, [
      ...HTML,
      'ETag',
      'W/"v1"',
      'Vary',
      'Accept-Encoding',
      'Content-Encoding',
      'br',
    ]);
  });

  it('merges Vary with the one there, once; leaves Vary: * and a weak ETag as they are', () => {
    assert.deepEqual(decide(200, [...HTML, 'Vary', 'Cookie']).headers.slice(2, 4), [
      'Vary',
      'Cookie, Accept-Encoding',
    ]);
    const twice = decide(200, [...HTML, 'vary', 'accept-encoding, Cookie']).headers;
    assert.equal(twice.filter((h) => h.toLowerCase() === 'vary').length, 1);
    assert.equal(decide(200, [...HTML, 'Vary', '*']).headers[3], '*');
    assert.equal(decide(200, [...HTML, 'ETag', 'W/"v"']).headers[3], 'W/"v"');
  });

  it('only varies when the client takes no coding, keeping Content-Length and the strong ETag', () => {
    const requests: Record<string, string>[] = [
      {},
      { 'accept-encoding': 'identity' },
      { 'accept-encoding': 'br;q=0' },
    ];
    for (const request of requests) {
      const { coding, headers } = decide(
        200,
        [...HTML, 'Content-Length', '900', 'ETag', '"e"'],
        request,
      );
      assert.equal(coding, undefined);
      assert.deepEqual(headers, [
        ...HTML,
        'Content-Length',
        '900',
        'ETag',
        '"e"',
        'Vary',
        'Accept-Encoding',
      ]);
    }
  });

  it('leaves alone what must not or need not be coded', () => {
    const untouched: [string, number, string[], number?][] = [
      ['already coded', 200, [...HTML, 'Content-Encoding', 'gzip']],
      ['no-transform', 200, [...HTML, 'Cache-Control', 'public, No-Transform']],
      ['a partial response', 206, [...HTML, 'Content-Range', 'bytes 0-9/100']],
      ['a Content-Range', 200, [...HTML, 'Content-Range', 'bytes 0-9/100']],
      ['204', 204, HTML],
      ['205', 205, HTML],
      ['a 1xx', 103, HTML],
      ['under the minimum', 200, [...HTML, 'Content-Length', String(MIN_COMPRESSED_SIZE - 1)]],
      ['a small body in memory', 200, HTML, MIN_COMPRESSED_SIZE - 1],
      ['an image', 200, ['Content-Type', 'image/png']],
      ['a binary', 200, ['Content-Type', 'application/octet-stream']],
      ['no type', 200, ['Content-Length', '9000']],
      ['server-sent events', 200, ['Content-Type', 'text/event-stream']],
    ];
    for (const [what, status, headers, length] of untouched) {
      const before = headers.slice();
      const { coding, headers: after } = decide(status, headers.slice(), undefined, length);
      assert.equal(coding, undefined, what);
      assert.deepEqual(after, before, what);
    }
  });

  it('makes a 304’s ETag weak when the client takes a coding, as its 200 would be', () => {
    assert.deepEqual(decide(304, ['ETag', '"x"']).headers, ['ETag', 'W/"x"']);
    assert.deepEqual(decide(304, ['ETag', '"x"'], {}).headers, ['ETag', '"x"']);
    const image = ['ETag', '"x"', 'Content-Type', 'image/png'];
    assert.deepEqual(decide(304, image.slice()).headers, image, 'a type never coded');
    const kept = ['ETag', '"x"', 'Cache-Control', 'max-age=60, no-transform'];
    assert.deepEqual(decide(304, kept.slice()).headers, kept, 'no-transform: never coded');
    const coded = ['ETag', '"x"', 'Content-Encoding', 'gzip'];
    assert.deepEqual(decide(304, coded.slice()).headers, coded, 'coded by the origin already');
  });

  it('codes by the client’s q-values: gzip and deflate when br is refused', () => {
    assert.equal(
      decide(200, [...HTML], { 'accept-encoding': 'br;q=0, gzip' }).headers.at(-1),
      'gzip',
    );
    assert.equal(
      decide(200, [...HTML], { 'accept-encoding': 'deflate' }).headers.at(-1),
      'deflate',
    );
  });
});

describe('dynamic compression: the body', () => {
  const decoders = {
    br: zlib.createBrotliDecompress,
    gzip: zlib.createGunzip,
    deflate: zlib.createInflate,
  };
  for (const [encoding, decoder] of Object.entries(decoders)) {
    it(`${encoding}: a piece written comes out decodable before the body ends`, async () => {
      const { ctx } = fakeCtx({ headers: { 'accept-encoding': encoding } });
      const coding = new DynamicCompression(false).head(ctx, 200, [...HTML])!;
      const decoded = coding.stream.pipe(decoder());
      const piece = Buffer.from('<p>the first piece of a page that is still being made</p>\n');
      coding.stream.write(piece);
      coding.wrote();
      const [first] = (await once(decoded, 'data')) as [Buffer];
      assert.deepEqual(first, piece);
      const rest: Buffer[] = [];
      decoded.on('data', (d: Buffer) => rest.push(d));
      coding.stream.end(Buffer.from('<p>the end</p>'));
      await once(decoded, 'end');
      assert.equal(Buffer.concat(rest).toString(), '<p>the end</p>');
    });
  }
});

describe('deflateWindow', () => {
  it('is zlib’s default for a long or unknown body, and narrows for a short one (nginx’s rule)', () => {
    assert.deepEqual(deflateWindow(undefined), { windowBits: 15, memLevel: 8 });
    assert.deepEqual(deflateWindow(1 << 20), { windowBits: 15, memLevel: 8 });
    assert.deepEqual(deflateWindow(2048), { windowBits: 12, memLevel: 5 });
    assert.deepEqual(deflateWindow(MIN_COMPRESSED_SIZE), { windowBits: 10, memLevel: 3 });
  });
});
