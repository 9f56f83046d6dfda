// A real gRPC service for the proxy's tests: @grpc/grpc-js serving test/fixtures/grpc/echo.proto
// (unary, server streaming, client streaming, bidirectional), over h2c, TLS or a Unix socket, with
// metadata in its headers and trailers, a status of the caller's choosing, and a count of the calls
// it saw cancelled; and a grpc-js client of it.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SERVER_CERT, SERVER_KEY, TEST_CA } from './tls.js';

const PROTO = fileURLToPath(new URL('../fixtures/grpc/echo.proto', import.meta.url));

export interface Note {
  text: string;
  count: number;
}

/** The Echo service's client, as grpc-js makes it from the .proto. */
export interface EchoClient extends grpc.Client {
  Unary(
    note: Partial<Note>,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    done: grpc.requestCallback<Note>,
  ): grpc.ClientUnaryCall;
  ServerStream(note: Partial<Note>): grpc.ClientReadableStream<Note>;
  ClientStream(done: grpc.requestCallback<Note>): grpc.ClientWritableStream<Partial<Note>>;
  Bidi(
    metadata?: grpc.Metadata,
    options?: grpc.CallOptions,
  ): grpc.ClientDuplexStream<Partial<Note>, Note>;
}

const definition = protoLoader.loadSync(PROTO, { defaults: true });
const Echo = (grpc.loadPackageDefinition(definition).portico as grpc.GrpcObject)
  .test as grpc.GrpcObject;
const EchoService = Echo.Echo as grpc.ServiceClientConstructor;

export interface EchoBackend {
  /** `127.0.0.1:PORT`, or `unix:PATH` as grpc-js binds it. */
  readonly address: string;
  readonly port: number;
  /** Calls begun, and those the caller (or the proxy for it) cancelled. */
  readonly calls: { started: number; cancelled: number; deadlines: number };
  close(): Promise<void>;
}

/** What a call of text `fail` ends with. */
export const FAILURE = { code: grpc.status.FAILED_PRECONDITION, details: 'told to fail: über' };

function trailer(value: string): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set('x-trailer', value);
  metadata.set('x-trailer-bin', Buffer.from([0, 1, 2, 255]));
  return metadata;
}

function header(): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set('x-header', 'head');
  return metadata;
}

/**
 * Serves Echo on `bind` (`127.0.0.1:0`, `unix:/path`); `tls`: with the test certificate. A call of
 * text `wait` answers nothing until it is cancelled; `fail` ends with FAILURE and a trailer: a
 * unary call at once (a trailers-only response), a server stream after its messages.
 */
export async function startEchoBackend(bind: string, tls = false): Promise<EchoBackend> {
  const calls = { started: 0, cancelled: 0, deadlines: 0 };
  const server = new grpc.Server();
  const watch = (
    call: grpc.ServerUnaryCall<Note, Note> | grpc.ServerReadableStream<Note, Note>,
  ) => {
    calls.started++;
    if (Number.isFinite(Number(call.getDeadline()))) calls.deadlines++;
    call.on('cancelled', () => calls.cancelled++);
  };
  server.addService(EchoService.service, {
    Unary(call: grpc.ServerUnaryCall<Note, Note>, done: grpc.sendUnaryData<Note>) {
      watch(call);
      const { text } = call.request;
      // Nothing sent before the status: a trailers-only response.
      if (text === 'fail') return done({ ...FAILURE, metadata: trailer('failed') });
      call.sendMetadata(header());
      if (text === 'wait') return;
      done(null, { text: `echo: ${text}`, count: text.length }, trailer('unary'));
    },
    ServerStream(call: grpc.ServerWritableStream<Note, Note>) {
      watch(call);
      const { text, count } = call.request;
      for (let i = 0; i < count; i++) call.write({ text: `${text} ${i}`, count: i });
      if (text === 'fail') call.emit('error', { ...FAILURE, metadata: trailer('failed') });
      else call.end(trailer('server-stream'));
    },
    ClientStream(call: grpc.ServerReadableStream<Note, Note>, done: grpc.sendUnaryData<Note>) {
      watch(call);
      const texts: string[] = [];
      call.on('data', (note: Note) => texts.push(note.text));
      call.on('end', () =>
        done(null, { text: texts.join(','), count: texts.length }, trailer('client-stream')),
      );
    },
    Bidi(call: grpc.ServerDuplexStream<Note, Note>) {
      watch(call);
      call.sendMetadata(header());
      call.on('data', (note: Note) =>
        call.write({ text: `echo: ${note.text}`, count: note.count }),
      );
      call.on('end', () => call.end(trailer('bidi')));
    },
  });
  const credentials = tls
    ? grpc.ServerCredentials.createSsl(null, [
        { cert_chain: readFileSync(SERVER_CERT), private_key: readFileSync(SERVER_KEY) },
      ])
    : grpc.ServerCredentials.createInsecure();
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(bind, credentials, (error, port) => (error ? reject(error) : resolve(port))),
  );
  return {
    address: bind.startsWith('unix:') ? bind : `127.0.0.1:${port}`,
    port,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.forceShutdown();
        resolve();
      }),
  };
}

/**
 * A client of Echo at `127.0.0.1:port`: over TLS trusting the test CA and naming `localhost`, or
 * in cleartext (h2c, prior knowledge).
 */
export function echoClient(port: number, tls: boolean): EchoClient {
  const credentials = tls ? grpc.credentials.createSsl(TEST_CA) : grpc.credentials.createInsecure();
  return new EchoService(`127.0.0.1:${port}`, credentials, {
    'grpc.ssl_target_name_override': 'localhost',
    'grpc.default_authority': 'localhost',
  }) as unknown as EchoClient;
}

export { grpc };
