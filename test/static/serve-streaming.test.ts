// Large files stream from disk with backpressure, and a client leaving mid-download leaves no
// file descriptor behind.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import zlib from 'node:zlib';
import { request } from '../helpers/http.js';
import { until } from '../helpers/wait.js';
import { startRig, tempDir, type Rig } from './harness.js';

const { dir: root, remove } = tempDir('streaming');
const BIG = randomBytes(5 * 1024 * 1024);
const TEXT = Buffer.from('streamed text, compressible. '.repeat(200_000));
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const HAS_PROC = (() => {
  try {
    readdirSync('/proc/self/fd');
    return true;
  } catch {
    return false;
  }
})();

/** Descriptors of this process open on `path`. */
function descriptorsOn(path: string): number {
  let count = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === path) count++;
    } catch {
      // closed between readdir and readlink
    }
  }
  return count;
}

/** Starts a download, reads one chunk, then drops the connection. */
function abortAfterFirstChunk(
  rig: Rig,
  path: string,
  headers: Record<string, string> = {},
): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port: rig.port, path, headers, agent: false },
      (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      },
    );
    req.on('error', (error) =>
      (error as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(error),
    );
    req.end();
  });
}

describe('large files', () => {
  let rig: Rig;
  before(async () => {
    writeFileSync(join(root, 'big.bin'), BIG);
    writeFileSync(join(root, 'big.txt'), TEXT);
    rig = await startRig({ wwwroot: root });
  });
  after(async () => {
    await rig.close();
    assert.deepEqual(rig.unexpected, []);
    remove();
  });

  it('streams a 5 MiB file intact', async () => {
    const reply = await request(rig, '/big.bin');
    assert.equal(reply.status, 200);
    assert.equal(reply.headers['content-length'], String(BIG.length));
    assert.equal(sha256(reply.body), sha256(BIG));
  });

  it('streams a large file compressed, chunked', async () => {
    const reply = await request(rig, '/big.txt', { headers: { 'accept-encoding': 'br' } });
    assert.equal(reply.headers['content-encoding'], 'br');
    assert.equal(reply.headers['content-length'], undefined);
    assert.equal(sha256(zlib.brotliDecompressSync(reply.body)), sha256(TEXT));
  });

  it('serves HEAD of a large file without reading it', async () => {
    const reply = await request(rig, '/big.bin', { method: 'HEAD' });
    assert.equal(reply.headers['content-length'], String(BIG.length));
    assert.equal(reply.body.length, 0);
  });

  for (const [label, path, headers] of [
    ['a plain download', '/big.bin', {}],
    ['a compressed download', '/big.txt', { 'accept-encoding': 'gzip' }],
    ['a single range', '/big.bin', { range: 'bytes=100-' }],
    ['a multipart range', '/big.bin', { range: 'bytes=0-10,1000-4000000' }],
  ] as const) {
    it(
      `closes the file when the client leaves ${label}`,
      {
        skip: HAS_PROC ? false : 'no /proc/self/fd',
      },
      async () => {
        const file = join(root, path);
        const before = readdirSync('/proc/self/fd').length;
        await abortAfterFirstChunk(rig, path, headers);
        await rig.idle();
        await until(() => descriptorsOn(file), {
          ok: (n) => n === 0,
          what: 'no descriptor left on the file',
        });
        await until(() => readdirSync('/proc/self/fd').length, {
          ok: (n) => n <= before,
          what: `no descriptor left at all (${before} before)`,
        });
        assert.deepEqual(rig.unexpected, []);
      },
    );
  }
});
