// A backend's connections under attack: a client that gives up while its request waits for one
// must not stop the server, and one client connection must not be able to hold them all.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { connect as netConnect, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../helpers/server.js';
import { h2Body, h2Connect } from './harness.js';
import { until } from '../helpers/wait.js';
import { spawnPortico, type PorticoProcess } from './portico-process.js';

interface Backend {
  readonly url: string;
  /** Requests to /hang received and never answered. */
  readonly hanging: ServerResponse[];
  /** Responses to /big still being sent. */
  big: number;
  close(): Promise<void>;
}

// More than the sockets between the backend and the client can hold, so a response to a client
// that reads nothing keeps its backend connection busy.
const BIG = Buffer.alloc(16 * 1024 * 1024, 'x');

/** /hang is never answered; /big is a 16 MB body; anything else is answered at once. */
async function startBackend(): Promise<Backend> {
  const hanging: ServerResponse[] = [];
  const server = http.createServer(
    { connectionsCheckingInterval: 100 },
    (req: IncomingMessage, res: ServerResponse) => {
      if (req.url === '/hang') {
        hanging.push(res);
        return;
      }
      if (req.url === '/big') {
        backend.big++;
        res.on('close', () => backend.big--);
        return void res.end(BIG);
      }
      req.resume();
      req.on('end', () => res.end(`ok ${req.url}`));
    },
  );
  // Idle connections the proxy keeps (undici connects again after an abort) are closed soon, so
  // its descriptors settle soon.
  server.keepAliveTimeout = 200;
  server.headersTimeout = 300;
  server.requestTimeout = 0;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const backend: Backend = {
    url: `http://127.0.0.1:${port}`,
    hanging,
    big: 0,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
  return backend;
}

/** The first backend's gate as the admin API's /status shows it. */
async function gateOf(adminPort: number): Promise<{ inFlight: number; queued: number }> {
  const status = (await (await fetch(`http://127.0.0.1:${adminPort}/status`)).json()) as {
    modules: { rproxy: { backends: { inFlight: number; queued: number }[] }[] };
  };
  return status.modules.rproxy[0]!.backends[0]!;
}

function openHanging(port: number, count: number): Socket[] {
  return Array.from({ length: count }, () => {
    const s = netConnect(port, '127.0.0.1', () =>
      s.write('GET /hang HTTP/1.1\r\nHost: localhost\r\n\r\n'),
    );
    s.on('error', () => undefined);
    return s;
  });
}

describe('a backend pool under attack', () => {
  let backend: Backend;
  let portico: PorticoProcess;
  let adminPort: number;

  before(async () => {
    backend = await startBackend();
    adminPort = await freePort();
    portico = await spawnPortico(
      `global:\n  loadModules: [rproxy]\n  wwwroot: .\n` +
        `  admin:\n    listen: "127.0.0.1:${adminPort}"\n    status: true\n` +
        `hosts:\n  - domain: localhost\n    locations:\n` +
        `      - path: /static\n      - path: /\n        proxyTo: ${backend.url}\n`,
      { files: { 'static/index.html': 'served' } },
    );
  });
  after(async () => {
    await portico?.stop();
    await backend?.close();
  });

  it('a client that leaves while its body waits for a backend connection stops nothing', async () => {
    const baseline = portico.fds();
    const sockets = openHanging(portico.port, 128);
    await until(() => backend.hanging.length, {
      ok: (n) => n === 128,
      what: '128 requests hanging at the backend',
    });
    // Its body is only begun, and it waits: every connection to the backend is taken.
    const post = netConnect(portico.port, '127.0.0.1', () =>
      post.write('POST /upload HTTP/1.1\r\nHost: localhost\r\nContent-Length: 9\r\n\r\na'),
    );
    post.on('error', () => undefined);
    await once(post, 'connect');
    // Destroyed once it waits in the backend's queue (/status says so).
    await until(async () => (await gateOf(adminPort)).queued, {
      ok: (n) => n === 1,
      what: 'one request queued at the gate',
    });
    post.destroy();
    await once(post, 'close');
    const alive = await fetch(`${portico.url}/static/`, { headers: { host: 'localhost' } }).then(
      (r) => r.status,
      () => 0,
    );
    assert.ok(portico.alive(), `the server died:\n${portico.stderr()}`);
    assert.equal(alive, 200);
    for (const s of sockets) s.destroy();
    for (const res of backend.hanging.splice(0)) res.destroy();
    await until(() => portico.fds(), {
      ok: (n) => n <= baseline + 2,
      what: `descriptors back to ${baseline} (+2)`,
    });
  });
});

describe('one client connection and a backend', () => {
  let backend: Backend;
  let portico: PorticoProcess;
  let adminPort: number;

  before(async () => {
    backend = await startBackend();
    adminPort = await freePort();
    portico = await spawnPortico(
      `global:\n  loadModules: [rproxy]\n  proxyTo: ${backend.url}\n  proxyQueueTimeout: 1000\n` +
        `  admin:\n    listen: "127.0.0.1:${adminPort}"\n    status: true\n`,
      { tls: true },
    );
  });
  after(async () => {
    await portico?.stop();
    await backend?.close();
  });

  it('an HTTP/2 connection that reads nothing holds only its share of the backend', async () => {
    const baseline = portico.fds();
    // A zero window: every response stalls at its first byte, and holds its backend connection.
    const session = h2Connect(portico.sport!, { initialWindowSize: 0 });
    const statuses: number[] = [];
    for (let i = 0; i < 100; i++) {
      const stream = session.request({ ':path': '/big' });
      stream.on('response', (h) => statuses.push(Number(h[':status'])));
      stream.on('error', () => undefined);
    }
    const held = await until(() => backend.big, { ok: (n) => n >= 32, what: '32 at the backend' });
    assert.equal(held, 32);
    // Another client is served at once meanwhile.
    assert.equal((await h2Body(portico.sport!, '/ok')).toString(), 'ok /ok');
    assert.equal(backend.big, 32);
    // /status shows the backend's gate: the share in flight, the rest waiting.
    await until(() => gateOf(adminPort), {
      ok: (gate) => gate.inFlight === 32 && gate.queued === 68,
      what: '32 in flight and the other 68 queued at the gate',
    });
    // Those left waiting past proxyQueueTimeout are told to come back later.
    await until(() => statuses.filter((s) => s === 503).length, {
      ok: (n) => n === 68,
      what: '68 requests refused with 503',
    });
    assert.ok(portico.alive());
    session.destroy();
    await until(() => backend.big, { ok: (n) => n === 0, what: 'no request left at the backend' });
    await until(() => portico.fds(), {
      ok: (n) => n <= baseline + 2,
      what: `descriptors back to ${baseline} (+2)`,
    });
  });
});
