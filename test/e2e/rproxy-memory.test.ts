// A slow client downloading 1 GB through the proxy: backpressure must hold the backend back, so
// memory stays flat whatever the size (the bound: RSS grows by less than 50 MB). In a file
// of its own, so nothing else in the process moves RSS meanwhile.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { it } from 'node:test';
import { startServer } from '../helpers/server.js';

const GB = 1024 ** 3;
const MB = 1024 ** 2;
const REST_MS = 20;

it(
  'streams 1 GB to a slow client with RSS growing by less than 50 MB',
  {
    timeout: 110_000,
  },
  async (t) => {
    const chunk = Buffer.alloc(MB, 42);
    const backend = http.createServer((req, res) => {
      const size = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('bytes'));
      res.writeHead(200, { 'Content-Length': String(size) });
      let sent = 0;
      const more = () => {
        while (sent < size) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
        res.end();
      };
      more();
    });
    backend.listen(0, '127.0.0.1');
    await once(backend, 'listening');
    t.after(() => {
      backend.closeAllConnections();
      backend.close();
    });
    const s = await startServer(
      `global:\n  loadModules: [rproxy]\n  proxyTo: http://127.0.0.1:${(backend.address() as AddressInfo).port}\n`,
    );
    t.after(() => s.close());

    // What the first proxied request costs once (undici compiles its parser, pools and buffers warm
    // up) is not what this measures: a first download of 64 MB pays it.
    await download(s.port, 64 * MB);
    const before = process.memoryUsage.rss();
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 50);
    t.after(() => clearInterval(sampler));
    const received = await download(s.port, GB);
    clearInterval(sampler);
    assert.equal(received, GB);
    const grown = (peak - before) / MB;
    assert.ok(grown < 50, `RSS grew ${grown.toFixed(1)} MB`);
  },
);

/** Downloads `bytes` through the proxy, slower than the backend sends: a rest after every 16 MB. */
function download(port: number, bytes: number): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: `/big?bytes=${bytes}`, agent: false }, (res) => {
        let received = 0;
        let sinceRest = 0;
        res.on('data', (d: Buffer) => {
          received += d.length;
          sinceRest += d.length;
          if (sinceRest >= 16 * MB) {
            sinceRest = 0;
            res.pause();
            // The client's pace (a rest of REST_MS), not a wait for anything.
            setTimeout(() => res.resume(), REST_MS);
          }
        });
        res.on('end', () => resolve(received));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}
