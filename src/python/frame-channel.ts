// The streams of one channel of frames to a bridge: a process's stdin and stdout (worker.ts), or
// one connection to a process the primary runs for every worker (connection.ts). Streams are
// opened, given up on, and told what the bridge sends them; when the channel is lost, every stream
// it held learns so at once.
import type { Logger } from '../http/logger.js';
import { frame, Frame } from './frames.js';
import { PythonStream, type StreamChannel } from './stream.js';

/** wsgi: threads in one process; wsgid: one request at a time per process; asgi: asyncio. */
export type PythonMode = 'wsgi' | 'wsgid' | 'asgi';

export interface PythonSpec {
  readonly mode: PythonMode;
  /** `pythonExecutable`: a name looked up on the PATH, or a path. */
  readonly executable: string;
  /** The application file, absolute. */
  readonly application: string;
  readonly clearImportPath: boolean;
  /** Set over Portico's own environment (`environmentVariables`). */
  readonly environment: Readonly<Record<string, string>>;
  /** Threads of a `wsgi` process. */
  readonly threads: number;
}

/** What a stream hears from the bridge. */
export interface StreamEvents {
  start(status: number, headers: [string, string][]): void;
  body(chunk: Buffer): void;
  /** The bridge consumed `bytes` more of what was sent to it. */
  credit(bytes: number): void;
  end(): void;
  /** The application failed (its message; the traceback is in the error log). */
  fail(message: string): void;
  /** The process died, or the connection to it closed, with the stream open. */
  gone(reason: string): void;
  wsAccept?(subprotocol: string | null, headers: [string, string][]): void;
  wsMessage?(binary: boolean, data: Buffer): void;
  wsClose?(code: number, reason: string): void;
}

/** Where what a stream given up on still sends goes: nowhere. */
const IGNORED: StreamEvents = {
  start: () => undefined,
  body: () => undefined,
  credit: () => undefined,
  end: () => undefined,
  fail: () => undefined,
  gone: () => undefined,
};

export abstract class FrameChannel implements StreamChannel {
  protected readonly streams = new Map<number, StreamEvents>();
  /** Streams given up on that the application has not ended yet. */
  protected readonly abandoned = new Set<number>();
  /** Why no stream can go through it any more, once none can. */
  protected lostBecause: string | undefined;
  private nextId = 1;

  constructor(
    readonly spec: PythonSpec,
    private readonly errorLog: Logger,
  ) {}

  abstract get pid(): number | undefined;

  /** @internal PythonStream's frames. */
  abstract write(data: Buffer): void;

  /** Streams open, those given up on too: how busy it is. */
  get load(): number {
    return this.streams.size;
  }

  has(id: number): boolean {
    return this.streams.has(id);
  }

  /** A new request: its JSON head goes out at once. */
  open(head: object, events: StreamEvents): PythonStream {
    const id = this.nextId;
    this.nextId = id >= 0xffffffff ? 1 : id + 1;
    const lost = this.lostBecause;
    // A channel just lost hears nothing more: the stream fails rather than waits.
    if (lost !== undefined) queueMicrotask(() => events.gone(`${this.label} ${lost}`));
    else {
      this.streams.set(id, events);
      this.write(frame(Frame.Request, id, JSON.stringify(head)));
    }
    return new PythonStream(this, id);
  }

  /**
   * The exchange gave up on the stream (a time limit ran out): the application is told to stop,
   * and what it still sends goes nowhere.
   */
  abandon(stream: PythonStream): void {
    const id = stream.id;
    if (!this.streams.has(id)) return;
    stream.giveUp();
    this.streams.set(id, IGNORED);
    this.abandoned.add(id);
    this.gaveUp(id);
    // A draining connection may have just been left with given-up streams alone.
    this.streamEnded();
  }

  /** A stream was given up on (the process watches that its application ends it). */
  protected gaveUp(_id: number): void {}

  /** A stream ended (a retired process or a draining connection may be done). */
  protected streamEnded(): void {}

  /** No stream can go through any more: every open one is told why. */
  protected lose(reason: string): void {
    if (this.lostBecause !== undefined) return;
    this.lostBecause = reason;
    for (const [, events] of this.streams) events.gone(`${this.label} ${reason}`);
    this.streams.clear();
    this.abandoned.clear();
  }

  protected get label(): string {
    return `${this.spec.mode} ${this.spec.application} (pid ${this.pid ?? '-'})`;
  }

  /** A line in the error log, naming the application and the process. */
  log(line: string): void {
    this.errorLog.log(`${this.label}: ${line}`);
  }

  protected dispatch(type: Frame, id: number, payload: Buffer): void {
    const events = this.streams.get(id);
    if (events === undefined) return;
    switch (type) {
      case Frame.Start: {
        const head = JSON.parse(payload.toString('latin1')) as {
          status: number;
          headers: [string, string][];
        };
        events.start(head.status, head.headers);
        break;
      }
      case Frame.Body:
        events.body(payload);
        break;
      case Frame.Credit:
        events.credit(payload.readUInt32BE(0));
        break;
      case Frame.End:
        this.ended(id);
        events.end();
        break;
      case Frame.Fail:
        this.ended(id);
        events.fail(payload.toString('utf8'));
        break;
      case Frame.WsAccept: {
        const accept = JSON.parse(payload.toString('latin1')) as {
          subprotocol: string | null;
          headers: [string, string][];
        };
        events.wsAccept?.(accept.subprotocol, accept.headers);
        break;
      }
      case Frame.WsText:
      case Frame.WsBinary:
        events.wsMessage?.(type === Frame.WsBinary, payload);
        break;
      case Frame.WsClose:
        events.wsClose?.(payload.readUInt16BE(0), payload.subarray(2).toString('utf8'));
        break;
    }
  }

  private ended(id: number): void {
    this.streams.delete(id);
    this.abandoned.delete(id);
    this.streamEnded();
  }
}
