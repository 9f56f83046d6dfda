// Clients of a compressed stream that do not play along: some leave in the middle of a large
// compressible response, others stop reading it. The compressor must not hold what the backend
// sends (the backend is paused instead), a client gone must end its compressor and the backend's
// response, and the server must keep serving others with its descriptors and memory given back.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { htmlPage } from '../helpers/html-page.js';
import { request } from '../helpers/http.js';
import { until } from '../helpers/wait.js';
import { assertMemory, assertRecovered, baseline, type Baseline } from './harness.js';
import { spawnPortico, type PorticoProcess } from './portico-process.js';

// Distinct pages, so that neither coding's window finds the body repeating.
const PAGES = Array.from({ length: 8 }, (_, i) => htmlPage(64 * 1024, i + 1));
/** Each response's size: far more than the socket buffers and Portico's stream buffers hold. */
const BODY = 32 * 1024 * 1024;

interface Sent {
  written: number;
  /** The backend waits for the connection to drain: Portico stopped reading. */
  blocked: boolean;
  finished: boolean;
  closed: boolean;
}

const sent: Sent[] = [];
let backend: http.Server;
let p: PorticoProcess;
let base: Baseline;

/** Writes BODY bytes of HTML as fast as the connection takes them. */
function big(_req: IncomingMessage, res: ServerResponse): void {
  const state: Sent = { written: 0, blocked: false, finished: false, closed: false };
  sent.push(state);
  res.writeHead(200, { 'Content-Type': 'text/html', 'Content-Length': BODY });
  res.on('finish', () => (state.finished = true));
  res.on('close', () => (state.closed = true));
  const pump = () => {
    state.blocked = false;
    while (state.written < BODY && !res.destroyed) {
      const page = PAGES[(state.written / PAGES[0]!.length) % PAGES.length]!;
      const piece = page.subarray(0, Math.min(page.length, BODY - state.written));
      state.written += piece.length;
      if (!res.write(piece)) {
        state.blocked = true;
        return void res.once('drain', pump);
      }
    }
    res.end();
  };
  pump();
}

before(async () => {
  backend = http.createServer((req, res) =>
    req.url === '/big' ? big(req, res) : res.end('backend'),
  );
  backend.listen(0, '127.0.0.1');
  await once(backend, 'listening');
  const { port } = backend.address() as AddressInfo;
  p = await spawnPortico(`global:\n  loadModules: [rproxy]\n  proxyTo: http://127.0.0.1:${port}\n`);
  base = await baseline(p, async () => {
    await assertServed();
    await finishedFetch('gzip');
    await finishedFetch('br');
  });
});

after(async () => {
  await p?.stop();
  backend?.closeAllConnections();
  backend?.close();
});

async function assertServed(): Promise<void> {
  const r = await request(p.port, '/ok', { headers: { 'accept-encoding': 'gzip, br' } });
  assert.deepEqual([r.status, r.text], [200, 'backend']);
}

/** A whole compressed /big, read to its end (the warm-up: both compressors loaded). */
async function finishedFetch(coding: string): Promise<void> {
  const res = await get(coding);
  assert.equal(res.headers['content-encoding'], coding);
  res.resume();
  await once(res, 'end');
}

function get(coding: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    http
      .get(
        {
          host: '127.0.0.1',
          port: p.port,
          path: '/big',
          headers: { 'accept-encoding': coding },
          agent: false,
        },
        resolve,
      )
      .on('error', reject);
  });
}

describe('compressed responses and clients that do not read them', () => {
  it('clients leaving mid-stream end their compressor and the backend’s response', async (t) => {
    const from = sent.length;
    const clients = await Promise.all(
      Array.from({ length: 30 }, (_, i) => get(i % 2 === 0 ? 'gzip' : 'br')),
    );
    await Promise.all(clients.map((res) => once(res, 'data')));
    for (const res of clients) res.destroy();
    await assertServed();
    const mine = sent.slice(from);
    await until(() => mine.every((s) => s.closed), { what: 'every backend response closed' });
    assert.ok(
      mine.every((s) => !s.finished),
      'each backend response was cut, not sent whole',
    );
    await assertRecovered(t, p, base);
  });

  it('clients that stop reading pause the backend instead of growing the server', async (t) => {
    const from = sent.length;
    const clients = await Promise.all(
      Array.from({ length: 8 }, (_, i) => get(i % 2 === 0 ? 'gzip' : 'br')),
    );
    for (const res of clients) res.pause();
    const mine = sent.slice(from);
    await until(() => mine.length === clients.length && mine.every((s) => s.blocked), {
      what: 'every backend response waiting for Portico to read',
      ms: 30_000,
    });
    const written = mine.map((s) => s.written);
    t.diagnostic(`backend bytes taken per stalled client: ${written.join(', ')}`);
    assert.ok(
      written.every((n) => n < BODY / 2),
      'the stalled responses are held back at the backend, not read into the server',
    );
    await assertServed();
    assertMemory(t, p, base);
    for (const res of clients) res.destroy();
    await until(() => mine.every((s) => s.closed), { what: 'every backend response closed' });
    await assertRecovered(t, p, base);
  });
});
