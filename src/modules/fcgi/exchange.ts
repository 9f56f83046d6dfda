// One request over one FastCGI connection: BEGIN_REQUEST with FCGI_KEEP_CONN, the variables, the
// client's body as STDIN records as the client sends it (waiting whenever the connection's buffer
// is full), and STDOUT records into a stream the response reads at the client's pace (the
// connection pauses while it is full). STDERR goes to the error log; END_REQUEST says how it
// ended and, when everything was read and sent, the connection goes back to the pool.
import type { Socket } from 'node:net';
import { PassThrough, type Readable } from 'node:stream';
import type { FcgiConnections } from './connections.js';
import {
  ProtocolStatus,
  RecordReader,
  records,
  RecordType,
  MAX_CONTENT,
  requestHead,
} from './records.js';

/** STDERR kept per request for the error log; the rest is counted, not kept. */
const MAX_STDERR = 64 * 1024;

export interface Ending {
  readonly protocolStatus: number;
  readonly appStatus: number;
  readonly stderr: string;
}

export interface Exchange {
  /**
   * The whole of STDOUT when it came with END_REQUEST in one read (the usual small response), to
   * be answered in one write; undefined when it streams through `output` (or nothing came).
   */
  readonly whole: Promise<Buffer | undefined>;
  /** STDOUT, as the application writes it, when it did not come whole. */
  readonly output: Readable;
  /** How the request ended; rejects when the connection failed first. */
  readonly ended: Promise<Ending>;
  /** Ends the work on the other side (the client went away): the connection is closed. */
  abort(): void;
}

/** A connection that failed before the application answered anything: the request may be sent again. */
export class StaleConnection extends Error {
  constructor(override readonly cause: unknown) {
    super((cause as Error).message);
  }
}

export async function startExchange(
  connections: FcgiConnections,
  vars: ReadonlyMap<string, string>,
  body: Readable | undefined,
  fresh: boolean,
  client: { readonly clientGone: boolean },
): Promise<Exchange> {
  const connection = await connections.acquire(fresh, client);
  const { socket, reused } = connection;
  const output = new PassThrough({ highWaterMark: MAX_CONTENT });
  // Its failures reach the stage through `ended`, also when it fails before anyone reads it.
  output.on('error', () => undefined);
  const reader = new RecordReader();
  let gotAnswer = false;
  let bodyStarted = false;
  let bodySent = body === undefined;
  let stderr = '';
  let stderrDropped = 0;
  let settle!: { resolve: (e: Ending) => void; reject: (e: unknown) => void };
  const ended = new Promise<Ending>((resolve, reject) => (settle = { resolve, reject }));
  // Read by the stage when it needs to know; a failure nobody asked about is not unhandled.
  ended.catch(() => undefined);
  let done = false;
  let decide: ((whole: Buffer | undefined) => void) | undefined;
  const whole = new Promise<Buffer | undefined>((resolve) => (decide = resolve));
  const decided = (value: Buffer | undefined) => {
    decide?.(value);
    decide = undefined;
  };

  const fail = (error: unknown) => {
    if (done) return;
    done = true;
    decided(undefined);
    socket.destroy();
    connection.end(false);
    body?.unpipe();
    // Nothing came back and nothing of the body was read: a pooled connection the application
    // had closed. The caller may send the request again on a new one.
    const retry = reused && !gotAnswer && !bodyStarted;
    const reason = retry ? new StaleConnection(error) : error;
    if (!output.destroyed) output.destroy(reason as Error);
    settle.reject(reason);
  };

  const write = (content: Buffer) => {
    // Backpressure: the connection waits while the client has not taken what came before.
    if (!output.write(content)) {
      socket.pause();
      output.once('drain', () => socket.resume());
    }
  };
  const onData = (chunk: Buffer) => {
    gotAnswer = true;
    connection.answered();
    // STDOUT of this read, held while it may turn out to be the whole of it.
    let held: Buffer[] | undefined = decide === undefined ? undefined : [];
    for (const record of reader.push(chunk)) {
      if (done) return;
      if (record.type === RecordType.Stdout) {
        if (record.content.length === 0 || output.destroyed) continue;
        if (held !== undefined) held.push(Buffer.from(record.content));
        else write(Buffer.from(record.content));
      } else if (record.type === RecordType.Stderr) {
        if (stderr.length < MAX_STDERR) stderr += record.content.toString('utf8');
        else stderrDropped += record.content.length;
      } else if (record.type === RecordType.EndRequest) {
        done = true;
        const ending: Ending = {
          appStatus: record.content.readUInt32BE(0),
          protocolStatus: record.content[4] ?? 0,
          stderr:
            stderrDropped > 0 ? `${stderr}… (${stderrDropped} more bytes not logged)` : stderr,
        };
        if (held !== undefined) decided(held.length === 1 ? held[0] : Buffer.concat(held));
        else if (!output.destroyed) output.end();
        const keep =
          ending.protocolStatus === ProtocolStatus.RequestComplete && bodySent && reader.empty;
        if (keep) {
          socket.off('data', onData);
          socket.off('error', fail);
          socket.off('close', onClose);
        } else socket.destroy();
        connection.end(keep);
        settle.resolve(ending);
      }
    }
    // More is to come: what came so far streams.
    if (held !== undefined && held.length > 0) {
      decided(undefined);
      for (const content of held) write(content);
    }
  };
  const onClose = () => {
    if (!done)
      fail(
        Object.assign(new Error('the application closed the connection'), { code: 'ECONNRESET' }),
      );
  };
  // The errors are made only when they are one: an Error's stack costs more than a small response.
  output.on('close', () => {
    if (!done) fail(Object.assign(new Error('the response was cut'), { code: 'ECONNABORTED' }));
  });
  socket.on('data', onData);
  socket.on('error', fail);
  socket.on('close', onClose);
  socket.resume();

  // A request without a body goes out in one write: BEGIN_REQUEST, PARAMS, the empty STDIN.
  socket.write(requestHead(vars, body === undefined));
  if (body === undefined) connection.sent();
  else
    void sendBody(socket, body, () => (bodyStarted = true)).then(
      () => {
        bodySent = true;
        if (!done) connection.sent();
      },
      (e: unknown) => fail(e),
    );
  return {
    whole,
    output,
    ended,
    // Called when the response closes, which is after every request: only a live one fails.
    abort: () => {
      if (!done) fail(Object.assign(new Error('the client went away'), { code: 'ECONNABORTED' }));
    },
  };
}

/** The body as STDIN records, at the pace the connection takes them, then the empty record. */
async function sendBody(socket: Socket, body: Readable, started: () => void): Promise<void> {
  for await (const chunk of body as AsyncIterable<Buffer>) {
    started();
    if (socket.destroyed) return;
    for (let at = 0; at < chunk.length; at += MAX_CONTENT) {
      const piece = Buffer.concat(records(RecordType.Stdin, chunk.subarray(at, at + MAX_CONTENT)));
      if (!socket.write(piece)) await waitForDrain(socket);
    }
  }
  if (!socket.destroyed) socket.write(Buffer.concat(records(RecordType.Stdin)));
}

function waitForDrain(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      socket.off('drain', done);
      socket.off('close', done);
      resolve();
    };
    socket.once('drain', done);
    socket.once('close', done);
  });
}
