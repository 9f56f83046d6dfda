// One request over one FastCGI connection: BEGIN_REQUEST with FCGI_KEEP_CONN, the variables, the
// client's body as STDIN records as the client sends it (waiting whenever the connection's buffer
// is full), and STDOUT records back. A small output that comes whole with END_REQUEST in one read
// is handed over as one buffer; a longer one becomes a stream the response reads at the client's
// pace (the connection pauses while it is full). STDERR goes to the error log; END_REQUEST says
// how it ended and, when everything was read and sent, the connection goes back to the pool. An
// application that takes longer than the proxy's time limits loses the connection.
import type { Socket } from 'node:net';
import { PassThrough, type Readable } from 'node:stream';
import { ResponseClock, type GatewayLimits, type Late } from '../../gateway/timeouts.js';
import type { ConnectionUser, FcgiConnection } from './connections.js';
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

/** A connection that failed before the application answered anything: the request may be sent again. */
export class StaleConnection extends Error {
  constructor(override readonly cause: unknown) {
    super((cause as Error).message);
  }
}

type Settled = { readonly ending: Ending } | { readonly error: unknown };

export interface ExchangeTiming {
  readonly limits: GatewayLimits;
  /** The failure a limit that ran out becomes. */
  readonly late: (late: Late) => Error;
}

/** Errors are made only when they are one: an Error's stack costs more than a small response. */
function failure(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

export class FcgiExchange implements ConnectionUser {
  /**
   * The output: whole (a Buffer) when all of it came with END_REQUEST in one read, the usual small
   * response, to be answered in one write; else a stream of it; undefined when the exchange failed
   * before anything came (`ended()` says how).
   */
  readonly first: Promise<Buffer | Readable | undefined>;
  private decide: ((first: Buffer | Readable | undefined) => void) | undefined;
  private output: PassThrough | undefined;
  private readonly reader = new RecordReader();
  private readonly socket: Socket;
  private gotAnswer = false;
  private bodyStarted = false;
  private bodySent: boolean;
  private stderr = '';
  private stderrDropped = 0;
  private settled: Settled | undefined;
  /** Paused until the output drains. */
  private draining = false;
  private onSettled: (() => void)[] = [];
  /** Stops reading the client's body, leaving what is unread to another attempt. */
  private stopBody: (() => void) | undefined;
  /** Sending the body waits for the application to read what it has. */
  private bodyBlocked: () => boolean = () => false;
  /** The head, then the body, within the proxy's limits; the relay starts the body's part. */
  readonly clock: ResponseClock;

  constructor(
    private readonly connection: FcgiConnection,
    vars: ReadonlyMap<string, string>,
    body: Readable | undefined,
    timing: ExchangeTiming,
  ) {
    this.socket = connection.socket;
    this.bodySent = body === undefined;
    this.first = new Promise((resolve) => (this.decide = resolve));
    // Before the head, the client holds things up while the application has taken all of its body
    // that came so far.
    this.clock = new ResponseClock(
      timing.limits,
      () => !this.bodySent && !this.bodyBlocked(),
      // Not a stale connection to try again: the application had the request all that time.
      (late) => this.fail(timing.late(late), { retryable: false }),
    );
    connection.user = this;
    // A request without a body goes out in one write: BEGIN_REQUEST, PARAMS, the empty STDIN.
    const head = requestHead(vars, {
      withoutBody: body === undefined,
      keepConnection: connection.kept,
    });
    this.socket.write(head, 'latin1');
    if (body === undefined) connection.sent();
    else {
      const sending = sendBody(this.socket, body, () => {
        this.bodyStarted = true;
        this.clock.sent();
      });
      this.stopBody = sending.stop;
      this.bodyBlocked = sending.blocked;
      void sending.done.then(
        () => {
          this.bodySent = true;
          if (this.settled === undefined && !this.gotAnswer) connection.sent();
        },
        (e: unknown) => this.fail(e),
      );
    }
  }

  /** END_REQUEST, once it came. */
  get ending(): Ending | undefined {
    return this.settled !== undefined && 'ending' in this.settled ? this.settled.ending : undefined;
  }

  /** How the request ended; rejects when the connection failed first. */
  ended(): Promise<Ending> {
    return new Promise((resolve, reject) => {
      const report = () => {
        const settled = this.settled!;
        if ('ending' in settled) resolve(settled.ending);
        else reject(settled.error);
      };
      if (this.settled === undefined) this.onSettled.push(report);
      else report();
    });
  }

  /** Ends the work on the other side (the client went away): the connection is closed. */
  abort(): void {
    if (this.settled === undefined) this.fail(failure('the client went away', 'ECONNABORTED'));
  }

  data(chunk: Buffer): void {
    this.gotAnswer = true;
    this.connection.answered();
    // STDOUT of this read, held while it may turn out to be the whole of it.
    let held: Buffer[] | undefined = this.decide === undefined ? undefined : [];
    for (const record of this.reader.push(chunk)) {
      if (this.settled !== undefined) return;
      if (record.type === RecordType.Stdout) {
        if (record.content.length === 0 || this.output?.destroyed) continue;
        if (held !== undefined) held.push(Buffer.from(record.content));
        else this.write(Buffer.from(record.content));
      } else if (record.type === RecordType.Stderr) {
        if (this.stderr.length < MAX_STDERR) this.stderr += record.content.toString('utf8');
        else this.stderrDropped += record.content.length;
      } else if (record.type === RecordType.EndRequest) {
        if (held !== undefined) this.decided(held.length === 1 ? held[0] : Buffer.concat(held));
        else if (this.output !== undefined && !this.output.destroyed) this.output.end();
        return this.end(record.content);
      }
    }
    // More is to come: what came so far streams.
    if (held !== undefined && held.length > 0) {
      this.decided(this.stream());
      for (const content of held) this.write(content);
    }
  }

  failed(error: Error): void {
    this.fail(error);
  }

  closed(): void {
    if (this.settled === undefined)
      this.fail(failure('the application closed the connection', 'ECONNRESET'));
  }

  private end(content: Buffer): void {
    const ending: Ending = {
      appStatus: content.readUInt32BE(0),
      protocolStatus: content[4] ?? 0,
      stderr:
        this.stderrDropped > 0
          ? `${this.stderr}… (${this.stderrDropped} more bytes not logged)`
          : this.stderr,
    };
    this.settle({ ending });
    this.connection.end({
      keep:
        this.connection.kept &&
        ending.protocolStatus === ProtocolStatus.RequestComplete &&
        this.bodySent &&
        this.reader.empty,
    });
  }

  /** The exchange fails; a stale connection's request may be sent again, unless not `retryable`. */
  private fail(error: unknown, { retryable = true }: { readonly retryable?: boolean } = {}): void {
    if (this.settled !== undefined) return;
    // Nothing came back and nothing of the body was read: a pooled connection the application
    // had closed. The caller may send the request again on a new one.
    const retry = retryable && this.connection.reused && !this.gotAnswer && !this.bodyStarted;
    const reason = retry ? new StaleConnection(error) : error;
    this.decided(undefined);
    this.settle({ error: reason });
    this.connection.end({ keep: false });
    if (this.output !== undefined && !this.output.destroyed) this.output.destroy(reason as Error);
  }

  private settle(settled: Settled): void {
    // Ended or failed, the exchange reads no more of the client's body: a retry or the stage
    // (which drops what is left) takes it from here.
    this.stopBody?.();
    this.clock.stop();
    this.settled = settled;
    for (const report of this.onSettled.splice(0)) report();
  }

  private decided(first: Buffer | Readable | undefined): void {
    this.decide?.(first);
    this.decide = undefined;
  }

  /** The output as a stream, made when it does not come whole. */
  private stream(): PassThrough {
    const output = new PassThrough({ highWaterMark: MAX_CONTENT });
    // Its failures reach the stage through `ended()`, also when it fails before anyone reads it.
    output.on('error', () => undefined);
    output.on('close', () => {
      if (this.settled === undefined) this.fail(failure('the response was cut', 'ECONNABORTED'));
    });
    this.output = output;
    return output;
  }

  private write(content: Buffer): void {
    // Backpressure: the connection waits while the client has not taken what came before (one
    // 'drain' listener, however many small records one read held).
    if (this.output!.write(content) || this.draining) return;
    this.draining = true;
    this.socket.pause();
    this.output!.once('drain', () => {
      this.draining = false;
      if (this.connection.user === this) this.socket.resume();
    });
  }
}

/**
 * The body as STDIN records, at the pace the connection takes them, then the empty record.
 * Stopped (the exchange failed), it reads no more: a request sent again on a new connection (a
 * stale one) reads the body from where it is, whole when nothing was read yet. (An async iterator
 * left waiting took the first piece when it came, and ended the body when it returned.)
 */
function sendBody(
  socket: Socket,
  body: Readable,
  sentPiece: () => void,
): { readonly done: Promise<void>; readonly stop: () => void; readonly blocked: () => boolean } {
  let stop = (): void => undefined;
  let blocked = false;
  const done = new Promise<void>((resolve, reject) => {
    const onReadable = (): void => {
      for (let chunk = body.read() as Buffer | null; chunk !== null; chunk = body.read()) {
        sentPiece();
        let full = false;
        for (let at = 0; at < chunk.length; at += MAX_CONTENT) {
          const piece = chunk.subarray(at, at + MAX_CONTENT);
          if (!socket.write(Buffer.concat(records(RecordType.Stdin, piece)))) full = true;
        }
        if (full) {
          // The rest waits in the body (and the client) until the application has read this.
          blocked = true;
          body.off('readable', onReadable);
          socket.once('drain', onDrain);
          return;
        }
      }
    };
    const onDrain = (): void => {
      blocked = false;
      body.on('readable', onReadable);
      onReadable();
    };
    const cleanup = (): void => {
      body.off('readable', onReadable).off('end', onEnd).off('error', onError);
      socket.off('drain', onDrain);
    };
    const onEnd = (): void => {
      cleanup();
      if (!socket.destroyed) socket.write(Buffer.concat(records(RecordType.Stdin)));
      resolve();
    };
    const onError = (error: Error): void => {
      cleanup();
      reject(error);
    };
    stop = () => {
      cleanup();
      resolve();
    };
    body.on('readable', onReadable).once('end', onEnd).once('error', onError);
  });
  return { done, stop, blocked: () => blocked };
}
