// A coded response on a real connection: its compressor, and the body it reads, are let go when the
// client leaves, whichever way the body is written (piece by piece, or as a stream); a whole body
// in memory is coded too, and the length logged is what went out.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { it, type TestContext } from 'node:test';
import zlib from 'node:zlib';
import type { Ctx } from '../../src/http/ctx.js';
import { DynamicCompression } from '../../src/http/dynamic-compression.js';
import { send, sendStream, startResponse } from '../../src/http/respond.js';
import type { BodyCoding } from '../../src/http/response-coder.js';
import { ctxFor } from '../helpers/ctx.js';
import { htmlPage } from '../helpers/html-page.js';

const PAGE = htmlPage(64 * 1024);
const HTML = ['Content-Type', 'text/html'];

/** A server whose one request is handed to `answer` with a coder; the coding it chose is kept. */
async function serve(
  t: TestContext,
  answer: (ctx: Ctx) => void,
): Promise<{ port: number; coding: () => BodyCoding | undefined; ctx: () => Ctx }> {
  let coding: BodyCoding | undefined;
  let current: Ctx | undefined;
  const server = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    const ctx = ctxFor(req, res, {}, req.url ?? '/');
    const coder = new DynamicCompression(false);
    ctx.coder = { keyedByChoice: false, head: (...args) => (coding = coder.head(...args)) };
    current = ctx;
    answer(ctx);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const port = (server.address() as AddressInfo).port;
  return { port, coding: () => coding, ctx: () => current! };
}

function get(port: number): Promise<IncomingMessage> {
  return new Promise((resolve, reject) =>
    http
      .get(
        { port, host: '127.0.0.1', headers: { 'accept-encoding': 'gzip' }, agent: false },
        resolve,
      )
      .on('error', reject),
  );
}

it('a body written piece by piece: a client gone destroys its compressor', async (t) => {
  let target: ReturnType<typeof startResponse>;
  const s = await serve(t, (ctx) => {
    target = startResponse(ctx, 200, [...HTML]);
    target!.write(PAGE);
  });
  const res = await get(s.port);
  assert.equal(res.headers['content-encoding'], 'gzip');
  await once(res, 'data');
  res.destroy();
  const stream = s.coding()!.stream;
  if (!stream.destroyed) await once(stream, 'close');
  assert.equal(target!.write(PAGE), false, 'a piece after that is refused, not thrown');
});

it('a streamed body: a client gone destroys the compressor and the body', async (t) => {
  const body = new PassThrough();
  let sending: Promise<void> | undefined;
  const s = await serve(t, (ctx) => {
    sending = sendStream(ctx, 200, [...HTML], body);
    body.write(PAGE);
  });
  const res = await get(s.port);
  await once(res, 'data');
  res.destroy();
  await assert.rejects(sending!);
  assert.equal(s.coding()!.stream.destroyed, true);
  assert.equal(body.destroyed, true);
});

it('a whole body in memory is coded; the length logged is the coded one', async (t) => {
  const s = await serve(t, (ctx) => send(ctx, 200, [...HTML], PAGE));
  const res = await get(s.port);
  const chunks: Buffer[] = [];
  res.on('data', (d: Buffer) => chunks.push(d));
  await once(res, 'end');
  const coded = Buffer.concat(chunks);
  assert.deepEqual(zlib.gunzipSync(coded), PAGE);
  assert.equal(s.ctx().length, coded.length);
});
