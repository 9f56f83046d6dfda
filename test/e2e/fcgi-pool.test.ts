// The FastCGI pool against an application that serves a fixed number of connections at once and
// leaves the others in its listen queue, as php-fpm's children do (a child stays with its
// connection until it closes). The pool must learn that number: no request waits for ever behind
// kept connections, and once learned, requests wait in Portico instead of opening a connection
// each (which cost php-fpm and Portico a connect, an accept and a close per request).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { RecordReader, RecordType } from '../../src/modules/fcgi/records.js';
import { request } from '../helpers/http.js';
import { startServer, type RunningServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';

const CHILDREN = 3;

function record(type: RecordType, content: Buffer): Buffer {
  const head = Buffer.from([1, type, 0, 1, content.length >> 8, content.length & 255, 0, 0]);
  return Buffer.concat([head, content]);
}

const ANSWER = Buffer.concat([
  record(RecordType.Stdout, Buffer.from('Content-Type: text/plain\r\n\r\nserved')),
  record(RecordType.EndRequest, Buffer.alloc(8)),
]);

/** php-fpm's shape: CHILDREN connections served at once, the rest wait unread, in order. */
class ChildrenApp {
  readonly server: Server;
  accepted = 0;
  mostServedAtOnce = 0;
  private serving = new Set<Socket>();
  private queue: Socket[] = [];

  /** `scriptMs`: how long each answer takes, as a script runs. */
  constructor(
    readonly path: string,
    private readonly scriptMs = 0,
    private readonly answer = ANSWER,
  ) {
    this.server = createServer((socket) => {
      this.accepted++;
      socket.pause();
      socket.on('close', () => {
        this.serving.delete(socket);
        this.next();
      });
      socket.on('error', () => undefined);
      this.queue.push(socket);
      this.next();
    });
  }

  listen(): Promise<void> {
    return new Promise((resolve) => this.server.listen(this.path, resolve));
  }

  close(): Promise<void> {
    for (const socket of [...this.serving, ...this.queue]) socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private next(): void {
    while (this.serving.size < CHILDREN && this.queue.length > 0) {
      const socket = this.queue.shift()!;
      if (socket.destroyed) continue;
      this.serving.add(socket);
      this.mostServedAtOnce = Math.max(this.mostServedAtOnce, this.serving.size);
      this.serve(socket);
    }
  }

  /** Answers every request that ends with its empty STDIN; keeps the connection (FCGI_KEEP_CONN). */
  private serve(socket: Socket): void {
    const reader = new RecordReader();
    socket.on('data', (chunk: Buffer) => {
      for (const r of reader.push(chunk))
        if (r.type === RecordType.Stdin && r.content.length === 0)
          setTimeout(() => socket.write(this.answer), this.scriptMs);
    });
    socket.resume();
  }
}

/** Portico in front of an application of CHILDREN children whose scripts take `scriptMs`. */
async function withApp(
  scriptMs: number,
  use: (
    app: ChildrenApp,
    burst: (n: number) => Promise<string[]>,
    server: RunningServer,
  ) => Promise<void>,
  answer = ANSWER,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'portico-fcgi-pool-'));
  writeFileSync(join(dir, 'hello.php'), '');
  const app = new ChildrenApp(join(dir, 'app.sock'), scriptMs, answer);
  await app.listen();
  let server: RunningServer | undefined;
  try {
    server = await startServer(
      `global:\n  wwwroot: ${dir}\n  loadModules: [fcgi]\n  fcgiScriptExtensions: [.php]\n  fcgiTo: unix://${app.path}\n`,
    );
    const port = server.port;
    await use(
      app,
      async (n) => {
        const replies = await Promise.all(
          Array.from({ length: n }, () => request(port, '/hello.php')),
        );
        return replies.map((r) => `${r.status} ${r.text}`);
      },
      server,
    );
  } finally {
    await server?.close();
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The first burst finds out: requests open connections, all but CHILDREN wait in the
 * application's queue, and kept connections are closed until each is answered. Learned, the next
 * bursts wait in Portico for the kept connections: at most a probe (one a second) and a
 * connection closed to answer it are new, not one per request.
 */
async function learns(scriptMs: number, size: number): Promise<void> {
  await withApp(scriptMs, async (app, burst) => {
    const started = Date.now();
    assert.deepEqual(new Set(await burst(size)), new Set(['200 served']));
    const took = Date.now() - started;
    // A request stuck behind kept connections waits WAIT_MS (30 s); 10 s leaves a busy machine room.
    assert.ok(took < 10_000 + (size * scriptMs) / CHILDREN, `first burst took ${took} ms`);
    const afterFirst = app.accepted;
    for (let round = 0; round < 3; round++) {
      assert.deepEqual(new Set(await burst(size)), new Set(['200 served']));
    }
    const opened = app.accepted - afterFirst;
    assert.ok(opened <= 4, `${opened} connections opened for ${3 * size} requests after learning`);
    assert.equal(app.mostServedAtOnce, CHILDREN);
  });
}

describe('FastCGI pool against an application with a fixed number of children', () => {
  // Seen before the fix: one request left unanswered for ever behind three idle kept connections.
  it('answers bursts beyond the children, then keeps to their number', { timeout: 20_000 }, () =>
    learns(0, 40),
  );

  // A script of 60 ms is answered 60 ms after its child is freed: still learned (a PHP page).
  it('learns the same with scripts that take their time', { timeout: 20_000 }, () =>
    learns(60, 15),
  );

  // Seen before the fix: a stopped server's process lived on for 30 s, held by the queue's timer.
  it('leaves no timer holding the process once the requests that waited are answered', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    await withApp(0, async (_app, burst) => {
      for (let round = 0; round < 3; round++)
        assert.deepEqual(new Set(await burst(40)), new Set(['200 served']));
    });
    await until(timers, {
      ok: (n) => n <= before,
      what: `no more timers than the ${before} before (one would keep the process alive)`,
    });
  });

  // Output in tens of thousands of 8-byte records to a client that reads late: the connection
  // waits for the response to drain with one listener, not one per record held in a read.
  it('relays many small records to a slow client with one drain listener', async () => {
    const pieces = 40_000;
    const answer = Buffer.concat([
      record(RecordType.Stdout, Buffer.from('Content-Type: text/plain\r\n\r\n')),
      ...Array.from({ length: pieces }, () => record(RecordType.Stdout, Buffer.from('abcdefgh'))),
      record(RecordType.EndRequest, Buffer.alloc(8)),
    ]);
    const warnings: string[] = [];
    const onWarning = (w: Error) => {
      if (w.name === 'MaxListenersExceededWarning') warnings.push(w.message);
    };
    process.on('warning', onWarning);
    try {
      await withApp(
        0,
        async (_app, _burst, server) => {
          const body = await new Promise<string>((resolve, reject) => {
            const req = httpRequest(
              { host: '127.0.0.1', port: server.port, path: '/hello.php', agent: false },
              (res) => {
                res.pause();
                const chunks: Buffer[] = [];
                res.on('data', (c: Buffer) => chunks.push(c));
                res.on('end', () => resolve(Buffer.concat(chunks).toString()));
                setTimeout(() => res.resume(), 300);
              },
            );
            req.on('error', reject);
            req.end();
          });
          assert.equal(body, 'abcdefgh'.repeat(pieces));
        },
        answer,
      );
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(warnings, []);
    } finally {
      process.off('warning', onWarning);
    }
  });
});

/**
 * An application whose connections serve one request each and are closed when the next one
 * comes (php-fpm's pm.max_requests, the close racing the request): the second request on a kept
 * connection finds it stale. Answers how many STDIN bytes it read.
 */
function oneRequestPerConnection(path: string): Server {
  return createServer((socket) => {
    const reader = new RecordReader();
    let served = false;
    let stdin = 0;
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      if (served) return void socket.destroy();
      for (const r of reader.push(chunk)) {
        if (r.type !== RecordType.Stdin) continue;
        stdin += r.content.length;
        if (r.content.length > 0) continue;
        served = true;
        socket.write(
          Buffer.concat([
            record(RecordType.Stdout, Buffer.from(`Content-Type: text/plain\r\n\r\ngot ${stdin}`)),
            record(RecordType.EndRequest, Buffer.alloc(8)),
          ]),
        );
      }
    });
  }).listen(path);
}

describe('FastCGI: a kept connection the application closed', () => {
  it('sends a request with a body again on a new connection, the body whole, when its client sends it late', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'portico-fcgi-stale-'));
    writeFileSync(join(dir, 'hello.php'), '');
    const app = oneRequestPerConnection(join(dir, 'app.sock'));
    let server: RunningServer | undefined;
    try {
      server = await startServer(
        `global:\n  wwwroot: ${dir}\n  loadModules: [fcgi]\n  fcgiScriptExtensions: [.php]\n  fcgiTo: unix://${join(dir, 'app.sock')}\n`,
      );
      assert.equal((await request(server.port, '/hello.php')).text, 'got 0');
      const body = Buffer.alloc(100_000, 7);
      const reply = await new Promise<string>((resolve, reject) => {
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port: server!.port,
            path: '/hello.php',
            method: 'POST',
            headers: { 'Content-Length': body.length },
          },
          (res) => {
            let text = '';
            res.setEncoding('utf8').on('data', (d: string) => (text += d));
            res.on('end', () => resolve(`${res.statusCode} ${text}`));
          },
        );
        req.on('error', reject);
        req.flushHeaders();
        // The body comes after the first attempt has failed on the stale connection.
        setTimeout(() => req.end(body), 200);
      });
      assert.equal(reply, `200 got ${body.length}`);
    } finally {
      await server?.close();
      await new Promise((resolve) => app.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
