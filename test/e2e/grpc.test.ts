// gRPC through the reverse proxy: a real @grpc/grpc-js client calls a real grpc-js server through
// Portico, every kind of call (unary, server streaming, client streaming, bidirectional, a non-OK
// status) with its metadata in headers and trailers, for each way a client reaches Portico and
// each way Portico reaches the backend (h2c over TCP or a Unix socket, HTTP/2 over TLS by ALPN).
// A new client side or backend side is one more entry in CLIENTS or BACKENDS.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  echoClient,
  FAILURE,
  grpc,
  startEchoBackend,
  type EchoBackend,
  type EchoClient,
  type Note,
} from '../helpers/grpc.js';
import { freePort, startServer, type RunningServer } from '../helpers/server.js';
import { SERVER_CERT, SERVER_KEY } from '../helpers/tls.js';
import { until } from '../helpers/wait.js';

interface ClientSide {
  /**
   * Portico's global settings for the listener the client uses (YAML lines, 2-space indent);
   * `extra` is a free port for one besides the plain listener the test server always has.
   */
  listener(extra: number): string;
  /** A client of Portico: `main` is the plain listener's port, `extra` the one above. */
  client(ports: { readonly main: number; readonly extra: number }): EchoClient;
}

interface BackendSide {
  start(dir: string): Promise<EchoBackend>;
  /** Portico's settings toward it (YAML lines under `global:`). */
  proxy(backend: EchoBackend): string;
}

const CLIENTS: Record<string, ClientSide> = {
  'TLS (HTTP/2 by ALPN)': {
    listener: (port) =>
      `  secure: true\n  sport: "127.0.0.1:${port}"\n  cert: ${SERVER_CERT}\n  key: ${SERVER_KEY}\n`,
    client: ({ extra }) => echoClient(extra, true),
  },
  // A gRPC client behind a load balancer that ended TLS: HTTP/2 with prior knowledge.
  'h2c (enableH2C)': {
    listener: () => '  enableH2C: true\n',
    client: ({ main }) => echoClient(main, false),
  },
};

const BACKENDS: Record<string, BackendSide> = {
  h2c: {
    start: () => startEchoBackend('127.0.0.1:0'),
    proxy: (b) => `  proxyTo: h2c://127.0.0.1:${b.port}\n`,
  },
  'h2c over a Unix socket': {
    start: (dir) => startEchoBackend(`unix:${join(dir, 'grpc.sock')}`),
    proxy: (b) => `  proxyTo: h2c+unix://${encodeURIComponent(b.address.slice('unix:'.length))}\n`,
  },
  'TLS (h2 by ALPN, proxyHTTP2)': {
    start: () => startEchoBackend('127.0.0.1:0', true),
    proxy: (b) =>
      `  proxyTo: https://localhost:${b.port}\n  proxyHTTP2: true\n  disableProxyCertificateVerification: true\n`,
  },
};

/** One unary call: its answer or error, its header and trailer metadata, its status. */
function unary(
  client: EchoClient,
  text: string,
  options: grpc.CallOptions = {},
): Promise<{
  error: grpc.ServiceError | null;
  note: Note | undefined;
  header: grpc.Metadata | undefined;
  status: grpc.StatusObject;
}> {
  return new Promise((resolve) => {
    let header: grpc.Metadata | undefined;
    let result: { error: grpc.ServiceError | null; note: Note | undefined } | undefined;
    const call = client.Unary({ text }, new grpc.Metadata(), options, (error, note) => {
      result = { error, note };
    });
    call.on('metadata', (m: grpc.Metadata) => (header = m));
    // The status comes after the callback, with the trailers.
    call.on('status', (status: grpc.StatusObject) =>
      setImmediate(() => resolve({ ...result!, header, status })),
    );
  });
}

function statusOf<
  T extends grpc.ClientReadableStream<Note> | grpc.ClientDuplexStream<Partial<Note>, Note>,
>(call: T): Promise<{ notes: Note[]; status: grpc.StatusObject }> {
  const notes: Note[] = [];
  return new Promise((resolve) => {
    call.on('data', (note: Note) => notes.push(note));
    call.on('error', () => undefined);
    call.on('status', (status: grpc.StatusObject) => resolve({ notes, status }));
  });
}

for (const [clientName, clientSide] of Object.entries(CLIENTS)) {
  for (const [backendName, backendSide] of Object.entries(BACKENDS)) {
    describe(`gRPC: client over ${clientName}, backend over ${backendName}`, () => {
      let dir: string;
      let backend: EchoBackend;
      let portico: RunningServer;
      let client: EchoClient;

      before(async () => {
        dir = mkdtempSync(join(tmpdir(), 'portico-grpc-'));
        backend = await backendSide.start(dir);
        const extra = await freePort();
        portico = await startServer(
          `global:\n  loadModules: [rproxy]\n${clientSide.listener(extra)}${backendSide.proxy(backend)}`,
        );
        client = clientSide.client({ main: portico.port, extra });
      });
      after(async () => {
        client?.close();
        await portico?.close();
        await backend?.close();
        rmSync(dir, { recursive: true, force: true });
      });

      it('unary: the answer, header metadata, OK with the trailer metadata', async () => {
        const r = await unary(client, 'hello');
        assert.equal(r.error, null);
        assert.deepEqual(r.note, { text: 'echo: hello', count: 5 });
        assert.deepEqual(r.header?.get('x-header'), ['head']);
        assert.equal(r.status.code, grpc.status.OK);
        assert.deepEqual(r.status.metadata.get('x-trailer'), ['unary']);
        assert.deepEqual(r.status.metadata.get('x-trailer-bin'), [Buffer.from([0, 1, 2, 255])]);
      });

      it('a non-OK status alone (trailers-only): its code, message (not ASCII) and metadata', async () => {
        const r = await unary(client, 'fail');
        assert.equal(r.error?.code, FAILURE.code);
        assert.equal(r.error?.details, FAILURE.details);
        assert.equal(r.status.code, FAILURE.code);
        assert.equal(r.status.details, FAILURE.details);
        assert.deepEqual(r.status.metadata.get('x-trailer'), ['failed']);
      });

      it('a non-OK status after streamed messages: the messages, then the status in trailers', async () => {
        const { notes, status } = await statusOf(client.ServerStream({ text: 'fail', count: 3 }));
        assert.deepEqual(
          notes.map((n) => n.text),
          ['fail 0', 'fail 1', 'fail 2'],
        );
        assert.equal(status.code, FAILURE.code);
        assert.equal(status.details, FAILURE.details);
        assert.deepEqual(status.metadata.get('x-trailer'), ['failed']);
      });

      it('server streaming: every message in order, then the status and trailers', async () => {
        const { notes, status } = await statusOf(client.ServerStream({ text: 'n', count: 50 }));
        assert.deepEqual(
          notes.map((n) => n.text),
          Array.from({ length: 50 }, (_, i) => `n ${i}`),
        );
        assert.equal(status.code, grpc.status.OK);
        assert.deepEqual(status.metadata.get('x-trailer'), ['server-stream']);
      });

      it('client streaming: every message reaches the backend, its one answer comes back', async () => {
        let trailers: grpc.Metadata | undefined;
        const note = await new Promise<Note>((resolve, reject) => {
          const call = client.ClientStream((error, answer) =>
            error ? reject(error) : resolve(answer!),
          );
          call.on('status', (s: grpc.StatusObject) => (trailers = s.metadata));
          for (const text of ['a', 'b', 'c']) call.write({ text });
          call.end();
        });
        assert.deepEqual(note, { text: 'a,b,c', count: 3 });
        await until(() => trailers, { what: 'the status' });
        assert.deepEqual(trailers!.get('x-trailer'), ['client-stream']);
      });

      it('bidirectional: each answer arrives before the client sends the next message', async () => {
        const call = client.Bidi();
        const done = statusOf(call);
        const answers: Note[] = [];
        call.on('data', (n: Note) => answers.push(n));
        for (let i = 0; i < 5; i++) {
          call.write({ text: `m${i}`, count: i });
          // The request is still open: only a proxy that streams both ways gets the answer here.
          await until(() => answers.length === i + 1, { what: `the echo of message ${i}` });
        }
        call.end();
        const { status } = await done;
        assert.deepEqual(
          answers.map((n) => n.text),
          ['echo: m0', 'echo: m1', 'echo: m2', 'echo: m3', 'echo: m4'],
        );
        assert.equal(status.code, grpc.status.OK);
        assert.deepEqual(status.metadata.get('x-trailer'), ['bidi']);
      });

      it('a deadline reaches the backend; a cancelled call is cancelled at the backend', async () => {
        const before = { ...backend.calls };
        const late = await unary(client, 'wait', { deadline: Date.now() + 300 });
        assert.equal(late.status.code, grpc.status.DEADLINE_EXCEEDED);
        assert.equal(backend.calls.deadlines, before.deadlines + 1, 'grpc-timeout passed on');
        const call = client.Unary({ text: 'wait' }, new grpc.Metadata(), {}, () => undefined);
        await until(() => backend.calls.started === before.started + 2, {
          what: 'the second call at the backend',
        });
        call.cancel();
        await until(() => backend.calls.cancelled === before.cancelled + 2, {
          what: 'both calls cancelled at the backend',
        });
      });

      it('200 calls at once all complete, each with its own answer', async () => {
        const results = await Promise.all(
          Array.from({ length: 200 }, (_, i) => unary(client, `c${i}`)),
        );
        assert.ok(results.every((r, i) => r.note?.text === `echo: c${i}`));
        assert.ok(results.every((r) => r.status.code === grpc.status.OK));
      });
    });
  }
}
