// A streamed body is always let go: when the response can no longer take a head (an HTTP/2 stream
// the client reset while a file was being opened), the body is destroyed, so its file descriptor
// is closed at once instead of at some later garbage collection.
import assert from 'node:assert/strict';
import { constants, connect, createServer, type ServerHttp2Stream } from 'node:http2';
import { once } from 'node:events';
import { Readable } from 'node:stream';
import { it } from 'node:test';
import type { Response } from '../../src/http/ctx.js';
import { sendStream } from '../../src/http/respond.js';
import { fakeCtx } from '../helpers/ctx.js';

it('destroys the body when the HTTP/2 stream was reset before the head', async () => {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  const client = connect(`http://127.0.0.1:${port}`);
  try {
    const reset = new Promise<ServerHttp2Stream>((resolve) =>
      server.once('stream', (stream) => stream.once('close', () => resolve(stream))),
    );
    const request = client.request({ ':path': '/file' });
    request.on('error', () => undefined);
    setImmediate(() => request.close(constants.NGHTTP2_CANCEL));
    const stream = await reset;
    const { ctx } = fakeCtx();
    Object.assign(ctx, { res: { stream } as unknown as Response });
    const body = Readable.from(['a file']);
    await assert.rejects(sendStream(ctx, 200, ['Content-Type', 'text/plain'], body), {
      code: 'ERR_HTTP2_INVALID_STREAM',
    });
    assert.equal(body.destroyed, true);
  } finally {
    client.close();
    server.close();
  }
});
