// ETag, Last-Modified and conditional requests through a real HTTP server (RFC 9110 §13).
import assert from 'node:assert/strict';
import { utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { request } from '../helpers/http.js';
import { startRig, tempDir, type Rig } from './harness.js';

const { dir: root, remove } = tempDir('validators');
const MTIME = new Date(Date.UTC(2025, 0, 6, 14, 3, 7));
const TEXT = 'validators '.repeat(100);

describe('validators and conditional requests', () => {
  let rig: Rig;
  let noETag: Rig;
  let etag: string;
  before(async () => {
    writeFileSync(join(root, 'page.txt'), TEXT);
    utimesSync(join(root, 'page.txt'), MTIME, MTIME);
    rig = await startRig({ wwwroot: root });
    noETag = await startRig({ wwwroot: root, enableETag: false });
    etag = (await request(rig, '/page.txt')).headers.etag!;
  });
  after(async () => {
    await rig.close();
    await noETag.close();
    assert.deepEqual(rig.unexpected, []);
    remove();
  });

  it('sends Last-Modified as an HTTP date and a strong ETag', async () => {
    const reply = await request(rig, '/page.txt');
    assert.equal(reply.headers['last-modified'], 'Mon, 06 Jan 2025 14:03:07 GMT');
    assert.match(etag, /^"[0-9a-f]+-[0-9a-f]+-[0-9a-f]+"$/);
    assert.equal((await request(rig, '/page.txt')).headers.etag, etag, 'stable');
  });

  it('sends no ETag when enableETag is false, but still Last-Modified', async () => {
    const reply = await request(noETag, '/page.txt');
    assert.equal(reply.headers.etag, undefined);
    assert.equal(reply.headers['last-modified'], 'Mon, 06 Jan 2025 14:03:07 GMT');
    assert.equal(
      (await request(noETag, '/page.txt', { headers: { 'if-none-match': etag } })).status,
      200,
    );
    assert.equal(
      (
        await request(noETag, '/page.txt', {
          headers: { 'if-modified-since': 'Mon, 06 Jan 2025 14:03:07 GMT' },
        })
      ).status,
      304,
    );
  });

  it('If-None-Match: 304 with validators and Vary, no body', async () => {
    for (const value of [etag, `"other", ${etag}`, `W/${etag}`, '*']) {
      const reply = await request(rig, '/page.txt', { headers: { 'if-none-match': value } });
      assert.equal(reply.status, 304, value);
      assert.equal(reply.body.length, 0);
      assert.equal(reply.headers.etag, etag);
      assert.equal(reply.headers['last-modified'], 'Mon, 06 Jan 2025 14:03:07 GMT');
      assert.equal(reply.headers.vary, 'Accept-Encoding');
    }
    assert.equal(
      (await request(rig, '/page.txt', { headers: { 'if-none-match': '"other"' } })).status,
      200,
    );
    assert.equal(
      (await request(rig, '/page.txt', { method: 'HEAD', headers: { 'if-none-match': etag } }))
        .status,
      304,
    );
    assert.equal(
      (await request(rig, '/page.txt', { method: 'POST', headers: { 'if-none-match': etag } }))
        .status,
      412,
    );
  });

  it("If-None-Match: a compressed variant's tag matches, and the 304 names the variant", async () => {
    const gzip = await request(rig, '/page.txt', { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(gzip.headers.etag, `${etag.slice(0, -1)}-gzip"`);
    const reply = await request(rig, '/page.txt', {
      headers: { 'if-none-match': gzip.headers.etag!, 'accept-encoding': 'gzip' },
    });
    assert.equal(reply.status, 304);
    assert.equal(reply.headers.etag, gzip.headers.etag);
    const plain = await request(rig, '/page.txt', {
      headers: { 'if-none-match': gzip.headers.etag! },
    });
    assert.equal(plain.status, 304);
    assert.equal(plain.headers.etag, etag);
  });

  it('If-Modified-Since: 304 unless modified later; ignored with If-None-Match', async () => {
    const same = { 'if-modified-since': 'Mon, 06 Jan 2025 14:03:07 GMT' };
    assert.equal((await request(rig, '/page.txt', { headers: same })).status, 304);
    assert.equal(
      (
        await request(rig, '/page.txt', {
          headers: { 'if-modified-since': 'Tue, 07 Jan 2025 00:00:00 GMT' },
        })
      ).status,
      304,
    );
    assert.equal(
      (
        await request(rig, '/page.txt', {
          headers: { 'if-modified-since': 'Mon, 06 Jan 2025 14:03:06 GMT' },
        })
      ).status,
      200,
    );
    assert.equal(
      (await request(rig, '/page.txt', { headers: { ...same, 'if-none-match': '"other"' } }))
        .status,
      200,
    );
    assert.equal(
      (await request(rig, '/page.txt', { headers: { 'if-modified-since': 'garbage' } })).status,
      200,
    );
  });

  it('If-Match: 412 unless the tag matches strongly', async () => {
    assert.equal((await request(rig, '/page.txt', { headers: { 'if-match': etag } })).status, 200);
    assert.equal((await request(rig, '/page.txt', { headers: { 'if-match': '*' } })).status, 200);
    const failed = await request(rig, '/page.txt', { headers: { 'if-match': '"other"' } });
    assert.equal(failed.status, 412);
    assert.equal(failed.headers.etag, etag);
    assert.equal(
      (await request(rig, '/page.txt', { headers: { 'if-match': `W/${etag}` } })).status,
      412,
    );
  });

  it('If-Unmodified-Since: 412 when modified since', async () => {
    assert.equal(
      (
        await request(rig, '/page.txt', {
          headers: { 'if-unmodified-since': 'Mon, 06 Jan 2025 14:03:07 GMT' },
        })
      ).status,
      200,
    );
    assert.equal(
      (
        await request(rig, '/page.txt', {
          headers: { 'if-unmodified-since': 'Mon, 06 Jan 2025 14:00:00 GMT' },
        })
      ).status,
      412,
    );
    assert.equal(
      (
        await request(rig, '/page.txt', {
          headers: { 'if-unmodified-since': 'Mon, 06 Jan 2025 14:00:00 GMT', 'if-match': etag },
        })
      ).status,
      200,
      'If-Match takes precedence',
    );
  });

  it('evaluates preconditions before Range', async () => {
    const reply = await request(rig, '/page.txt', {
      headers: { 'if-none-match': etag, range: 'bytes=0-3' },
    });
    assert.equal(reply.status, 304);
    assert.equal(
      (await request(rig, '/page.txt', { headers: { 'if-match': '"x"', range: 'bytes=0-3' } }))
        .status,
      412,
    );
  });
});
