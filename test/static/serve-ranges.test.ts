// Range requests through a real HTTP server, from memory and streamed from disk.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { request, type Reply } from '../helpers/http.js';
import { startRig, tempDir, type Rig } from './harness.js';

const { dir: root, remove } = tempDir('ranges');
const DATA = randomBytes(10_000);
const MTIME = new Date(Date.UTC(2025, 0, 6, 14, 3, 7));

interface Part {
  headers: Record<string, string>;
  body: Buffer;
}

function parseMultipart(reply: Reply): Part[] {
  const match = /^multipart\/byteranges; boundary=([0-9a-f]+)$/.exec(
    reply.headers['content-type'] ?? '',
  );
  assert.ok(match, `multipart type: ${reply.headers['content-type']}`);
  const delimiter = Buffer.from(`\r\n--${match[1]}`);
  const parts: Part[] = [];
  let at = reply.body.indexOf(delimiter);
  assert.equal(at, 0);
  for (;;) {
    at += delimiter.length;
    if (reply.body.subarray(at, at + 4).toString() === '--\r\n') {
      assert.equal(at + 4, reply.body.length, 'nothing after the closing delimiter');
      return parts;
    }
    const headEnd = reply.body.indexOf('\r\n\r\n', at);
    const headers = Object.fromEntries(
      reply.body
        .subarray(at + 2, headEnd)
        .toString()
        .split('\r\n')
        .map((line) => [
          line.slice(0, line.indexOf(':')).toLowerCase(),
          line.slice(line.indexOf(':') + 1).trim(),
        ]),
    );
    const next = reply.body.indexOf(delimiter, headEnd + 4);
    parts.push({ headers, body: reply.body.subarray(headEnd + 4, next) });
    at = next;
  }
}

for (const [label, options] of [
  ['from memory', {}],
  ['streamed from disk', { maxCachedFileSize: 0 }],
] as const) {
  describe(`ranges, ${label}`, () => {
    let rig: Rig;
    let etag: string;
    before(async () => {
      writeFileSync(join(root, 'data.txt'), DATA);
      writeFileSync(join(root, 'empty.txt'), '');
      utimesSync(join(root, 'data.txt'), MTIME, MTIME);
      rig = await startRig({ wwwroot: root }, options);
      etag = (await request(rig, '/data.txt')).headers.etag!;
    });
    after(async () => {
      await rig.close();
      assert.deepEqual(rig.unexpected, []);
    });

    it('serves a single range as 206 with Content-Range, uncompressed', async () => {
      const reply = await request(rig, '/data.txt', {
        headers: { range: 'bytes=10-19', 'accept-encoding': 'gzip, br' },
      });
      assert.equal(reply.status, 206);
      assert.equal(reply.headers['content-range'], 'bytes 10-19/10000');
      assert.equal(reply.headers['content-length'], '10');
      assert.equal(reply.headers['content-encoding'], undefined);
      assert.equal(reply.headers['content-type'], 'text/plain; charset=utf-8');
      assert.equal(reply.headers.etag, etag);
      assert.deepEqual(reply.body, DATA.subarray(10, 20));
    });

    it('serves open-ended and suffix ranges, clamping the end', async () => {
      const tail = await request(rig, '/data.txt', { headers: { range: 'bytes=9990-' } });
      assert.equal(tail.headers['content-range'], 'bytes 9990-9999/10000');
      assert.deepEqual(tail.body, DATA.subarray(9990));
      const suffix = await request(rig, '/data.txt', { headers: { range: 'bytes=-5' } });
      assert.equal(suffix.headers['content-range'], 'bytes 9995-9999/10000');
      assert.deepEqual(suffix.body, DATA.subarray(9995));
      const clamped = await request(rig, '/data.txt', { headers: { range: 'bytes=9000-20000' } });
      assert.equal(clamped.status, 206);
      assert.equal(clamped.headers['content-range'], 'bytes 9000-9999/10000');
      assert.deepEqual(clamped.body, DATA.subarray(9000));
    });

    it('serves several ranges as multipart/byteranges', async () => {
      const reply = await request(rig, '/data.txt', {
        headers: { range: 'bytes=0-9, 100-199, -10' },
      });
      assert.equal(reply.status, 206);
      assert.equal(reply.headers['content-length'], String(reply.body.length));
      const parts = parseMultipart(reply);
      assert.deepEqual(
        parts.map((p) => p.headers['content-range']),
        ['bytes 0-9/10000', 'bytes 100-199/10000', 'bytes 9990-9999/10000'],
      );
      assert.ok(parts.every((p) => p.headers['content-type'] === 'text/plain; charset=utf-8'));
      assert.deepEqual(parts[0]!.body, DATA.subarray(0, 10));
      assert.deepEqual(parts[1]!.body, DATA.subarray(100, 200));
      assert.deepEqual(parts[2]!.body, DATA.subarray(9990));
      const again = await request(rig, '/data.txt', { headers: { range: 'bytes=0-9, 100-199' } });
      assert.notEqual(
        again.headers['content-type'],
        reply.headers['content-type'],
        'a fresh boundary each time',
      );
    });

    it('serves the whole file for overlapping or too many ranges', async () => {
      const overlapping = await request(rig, '/data.txt', {
        headers: { range: 'bytes=0-100,50-150' },
      });
      assert.equal(overlapping.status, 200);
      assert.deepEqual(overlapping.body, DATA);
      const many = Array.from({ length: 33 }, (_, i) => `${i * 10}-${i * 10 + 1}`).join(',');
      assert.equal(
        (await request(rig, '/data.txt', { headers: { range: `bytes=${many}` } })).status,
        200,
      );
    });

    it('answers 416 with Content-Range when no range is satisfiable', async () => {
      const reply = await request(rig, '/data.txt', { headers: { range: 'bytes=10000-' } });
      assert.equal(reply.status, 416);
      assert.equal(reply.headers['content-range'], 'bytes */10000');
      assert.equal(
        (await request(rig, '/data.txt', { headers: { range: 'bytes=-0' } })).status,
        416,
      );
    });

    it('ignores a malformed Range, another unit, an empty file, and Range on HEAD', async () => {
      for (const range of ['bytes=x-y', 'lines=1-2', 'bytes=5-1']) {
        const reply = await request(rig, '/data.txt', { headers: { range } });
        assert.equal(reply.status, 200, range);
        assert.equal(reply.body.length, DATA.length);
      }
      assert.equal(
        (await request(rig, '/empty.txt', { headers: { range: 'bytes=0-0' } })).status,
        200,
      );
      const head = await request(rig, '/data.txt', {
        method: 'HEAD',
        headers: { range: 'bytes=0-9' },
      });
      assert.equal(head.status, 200);
      assert.equal(head.headers['content-length'], '10000');
    });

    it('If-Range: the range when the ETag or date matches, else the whole file', async () => {
      const lastModified = MTIME.toUTCString();
      for (const [ifRange, status] of [
        [etag, 206],
        [lastModified, 206],
        ['"stale"', 200],
        [`W/${etag}`, 200],
        [`${etag.slice(0, -1)}-gzip"`, 200],
        [new Date(MTIME.getTime() - 1000).toUTCString(), 200],
      ] as const) {
        const reply = await request(rig, '/data.txt', {
          headers: { range: 'bytes=0-9', 'if-range': ifRange },
        });
        assert.equal(reply.status, status, ifRange);
        assert.equal(reply.body.length, status === 206 ? 10 : 10_000);
      }
    });
  });
}

after(remove);
