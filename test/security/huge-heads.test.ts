// Heads too large for HTTP/1.1: a megabyte-long field line is refused with 431 and a megabyte-long
// request target with 414, thousands of small fields with 431, each as soon as the head passes
// Node's 16 KB limit: nothing reads or keeps the rest. Many at once leave no memory behind.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { request } from '../helpers/http.js';
import { assertRecovered, baseline, exchange, statusLines, type Baseline } from './harness.js';
import { spawnPortico, type PorticoProcess } from './portico-process.js';

const refusal = (status: string) =>
  `HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\nServer: Portico\r\n\r\n`;
const MB = 1024 * 1024;

let p: PorticoProcess;
let base: Baseline;
// Answers with how many fields the request it received carried.
let backend: Server;

before(async () => {
  backend = createServer((req, res) => res.end(String(req.rawHeaders.length / 2)));
  backend.maxHeadersCount = 0;
  backend.listen(0, '127.0.0.1');
  await once(backend, 'listening');
  const { port } = backend.address() as AddressInfo;
  p = await spawnPortico(
    'global:\n  wwwroot: www\n  loadModules: [rproxy]\nhosts:\n  - domain: localhost\n' +
      `    locations:\n      - path: /count\n        proxyTo: http://127.0.0.1:${port}\n`,
    { files: { 'www/index.html': 'hello' } },
  );
  base = await baseline(p, assertServed);
});

after(async () => {
  await p?.stop();
  backend?.close();
});

async function assertServed(): Promise<void> {
  const file = await request(p.port, '/index.html');
  assert.deepEqual([file.status, file.text], [200, 'hello']);
}

describe('huge heads', () => {
  it('refuses a 1 MB field line with 431 and a 1 MB request target with 414, twenty of each at once', async (t) => {
    const field = `GET / HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(MB)}\r\n\r\n`;
    const target = `GET /${'a'.repeat(MB)} HTTP/1.1\r\nHost: localhost\r\n\r\n`;
    const answers = Promise.all([
      ...Array.from({ length: 20 }, () => exchange(p.port, field)),
      ...Array.from({ length: 20 }, () => exchange(p.port, target)),
    ]);
    await assertServed();
    for (const [i, answer] of (await answers).entries()) {
      const expected =
        i < 20 ? refusal('431 Request Header Fields Too Large') : refusal('414 URI Too Long');
      assert.equal(answer.data, expected, `connection ${i}`);
      assert.ok(answer.closed, `connection ${i} was left open`);
    }
    await assertServed();
    await assertRecovered(t, p, base);
  });

  it('refuses ten thousand small fields with 431, and more than a thousand whole rather than cut', async (t) => {
    const fields = (n: number) => Array.from({ length: n }, (_, i) => `x${i}:1\r\n`).join('');
    const many = await exchange(
      p.port,
      `GET / HTTP/1.1\r\nHost: localhost\r\n${fields(10_000)}\r\n`,
    );
    assert.equal(many.data, refusal('431 Request Header Fields Too Large'));
    assert.ok(many.closed);
    // 2,500 fields in 16 KB: within the size limit, but a backend would not see them all.
    const over = await exchange(
      p.port,
      `GET /count HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n${fields(2_500)}\r\n`,
    );
    assert.deepEqual(statusLines(over.data), ['HTTP/1.1 431 Request Header Fields Too Large']);
    // A thousand (Host and Connection among them) reach the backend, every one.
    const fit = await exchange(
      p.port,
      `GET /count HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n${fields(998)}\r\n`,
    );
    assert.deepEqual(statusLines(fit.data), ['HTTP/1.1 200 OK']);
    // Host and the 998, the three X-Forwarded-* the proxy sets, and its own Connection.
    assert.ok(fit.data.endsWith('\r\n\r\n1003'), fit.data.slice(-40));
    await assertServed();
    await assertRecovered(t, p, base);
  });
});
