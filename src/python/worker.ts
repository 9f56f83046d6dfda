// One bridge process (python/portico_bridge.py) serving one application: started, told apart from
// a failed import, given streams, and ended. Its error output goes to the error log line by line;
// when it dies, every stream it held learns so at once. A stream given up on (a time limit ran
// out) that the application does not end soon after it is told to is stuck: a thread, a task or,
// for wsgid, the whole process lost to it; the pool replaces such a process.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../http/logger.js';
import { inWords } from '../config/system-errors.js';
import { frame, Frame, FrameReader } from './frames.js';
import { PythonStartError, startFailure } from './start-error.js';
import { PythonStream } from './stream.js';

export const BRIDGE = fileURLToPath(new URL('../../python/portico_bridge.py', import.meta.url));

/** wsgi: threads in one process; wsgid: one request at a time per process; asgi: an asyncio loop. */
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

/** What the bridge says of itself once the application is loaded. */
export interface BridgeInfo {
  readonly python: string;
  readonly executable: string;
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
  /** The process died with the stream open. */
  gone(reason: string): void;
  wsAccept?(subprotocol: string | null, headers: [string, string][]): void;
  wsMessage?(binary: boolean, data: Buffer): void;
  wsClose?(code: number, reason: string): void;
}

/**
 * How long an application has to end a request it was told to give up before its process counts
 * as stuck; also how long a process retired for that has to exit once its other requests are done.
 */
export const GIVE_UP_MS = 1_000;

/** Where what a stream given up on still sends goes: nowhere. */
const IGNORED: StreamEvents = {
  start: () => undefined,
  body: () => undefined,
  credit: () => undefined,
  end: () => undefined,
  fail: () => undefined,
  gone: () => undefined,
};

/** Longest error-output line kept whole; the rest of it is cut. */
const MAX_LINE = 16 * 1024;
/** Error-output lines kept to explain a process that died before it was ready. */
const KEPT_LINES = 20;

export class PythonWorker {
  readonly ready: Promise<BridgeInfo>;
  /** Called once when the process has exited, whatever the reason. */
  onExit: ((reason: string) => void) | undefined;
  /** Called once when a stream given up on is still open GIVE_UP_MS after. */
  onStuck: (() => void) | undefined;
  readonly startedAt = Date.now();
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly streams = new Map<number, StreamEvents>();
  /** Streams given up on that the application has not ended yet. */
  private readonly abandoned = new Set<number>();
  /** Retired: it ends once only streams given up on are left. */
  private retiring = false;
  private stopping: Promise<void> | undefined;
  private nextId = 1;
  private exited: string | undefined;
  private readonly exit: Promise<void>;
  private readonly lastLines: string[] = [];
  private partial = '';

  constructor(
    readonly spec: PythonSpec,
    private readonly errorLog: Logger,
  ) {
    const { mode, executable, application, clearImportPath, threads } = spec;
    this.child = spawn(
      executable,
      [BRIDGE, mode, application, clearImportPath ? '1' : '0', String(threads)],
      {
        cwd: dirname(application),
        env: { ...process.env, ...spec.environment },
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    let settle: { resolve(info: BridgeInfo): void; reject(e: Error): void } | undefined;
    this.ready = new Promise<BridgeInfo>((resolve, reject) => (settle = { resolve, reject }));
    // A failure is read where it is awaited; an unawaited one (a restart) must not be unhandled.
    this.ready.catch(() => undefined);
    const reader = new FrameReader((type, id, payload) => {
      if (id === 0) {
        const waiting = settle;
        settle = undefined;
        if (type === Frame.Ready) waiting?.resolve(JSON.parse(payload.toString()) as BridgeInfo);
        else if (type === Frame.StartFailed && waiting)
          void startFailure(payload, spec, (line) => this.log(line)).then(waiting.reject);
        return;
      }
      this.dispatch(type, id, payload);
    });
    this.child.stdout.on('data', (chunk: Buffer) => {
      try {
        reader.push(chunk);
      } catch (e) {
        this.log(`the bridge broke its framing (${(e as Error).message}); it is ended`);
        this.child.kill('SIGKILL');
      }
    });
    this.child.stderr.setEncoding('utf8').on('data', (text: string) => this.stderr(text));
    // Writes to a process that just died fail; the exit is what reports it.
    this.child.stdin.on('error', () => undefined);
    this.exit = new Promise((resolve) => {
      const exited = (reason: string) => {
        if (this.exited !== undefined) return;
        this.exited = reason;
        if (this.partial !== '') this.stderr('\n');
        const why = this.lastLines.length > 0 ? `: ${this.lastLines.join('\n')}` : '';
        settle?.reject(new PythonStartError(`${this.label} ${reason} before it was ready${why}`));
        settle = undefined;
        for (const [, events] of this.streams) events.gone(`${this.label} ${reason}`);
        this.streams.clear();
        this.abandoned.clear();
        this.onExit?.(reason);
        resolve();
      };
      this.child.once('error', (e) =>
        exited(
          (e as NodeJS.ErrnoException).code === 'ENOENT'
            ? `could not start: pythonExecutable "${executable}" was not found`
            : `could not start: ${inWords(e)}`,
        ),
      );
      this.child.once('close', (code, signal) =>
        exited(signal ? `was ended by ${signal}` : `exited with code ${code}`),
      );
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Streams open, those given up on too: how busy the process is. */
  get load(): number {
    return this.streams.size;
  }

  /** Whether the process has exited (`onExit` has been called, if it was set). */
  get gone(): boolean {
    return this.exited !== undefined;
  }

  has(id: number): boolean {
    return this.streams.has(id);
  }

  /** A new request: its JSON head goes out at once. */
  open(head: object, events: StreamEvents): PythonStream {
    const id = this.nextId;
    this.nextId = id >= 0xffffffff ? 1 : id + 1;
    const exited = this.exited;
    // A process that has just died hears nothing more: the stream fails rather than waits.
    if (exited !== undefined) queueMicrotask(() => events.gone(`${this.label} ${exited}`));
    else {
      this.streams.set(id, events);
      this.write(frame(Frame.Request, id, JSON.stringify(head)));
    }
    return new PythonStream(this, id);
  }

  /**
   * The exchange gave up on the stream (a time limit ran out): the application is told to stop,
   * what it still sends goes nowhere, and if the application has had it in hand for GIVE_UP_MS
   * since without ending it, the process is stuck (`onStuck`).
   */
  abandon(stream: PythonStream): void {
    const id = stream.id;
    if (!this.streams.has(id)) return;
    stream.cancel();
    this.streams.set(id, IGNORED);
    this.abandoned.add(id);
    this.watchAbandoned(id);
  }

  private watchAbandoned(id: number): void {
    setTimeout(() => {
      if (!this.abandoned.has(id) || this.exited !== undefined) return;
      // Still waiting its turn behind others (which have limits of their own): the bridge ends it
      // as soon as it comes up.
      if (!this.serving(id)) return this.watchAbandoned(id);
      const stuck = this.onStuck;
      this.onStuck = undefined;
      stuck?.();
    }, GIVE_UP_MS).unref();
  }

  /**
   * Whether the application has the stream in hand rather than waiting its turn: the bridge takes
   * requests in order, one at a time (wsgid), `threads` at a time (wsgi) or all at once (asgi).
   */
  private serving(id: number): boolean {
    const { mode, threads } = this.spec;
    const atOnce = mode === 'wsgid' ? 1 : mode === 'wsgi' ? threads : Infinity;
    let before = 0;
    for (const open of this.streams.keys()) {
      if (open === id) return before < atOnce;
      before++;
    }
    return false;
  }

  /** Serves the streams it has, then ends; streams given up on are not waited for. */
  retire(): void {
    this.retiring = true;
    this.endIfRetired();
  }

  /** @internal PythonStream's frames. */
  write(data: Buffer): void {
    if (this.exited === undefined) this.child.stdin.write(data);
  }

  /**
   * Ends the process: its input closes (the bridge finishes, an ASGI application runs its
   * lifespan shutdown), and after `graceMs` it is killed.
   */
  stop(graceMs: number): Promise<void> {
    if (this.exited !== undefined) return Promise.resolve();
    this.stopping ??= (async () => {
      this.child.stdin.end();
      const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
      await this.exit;
      clearTimeout(timer);
    })();
    return this.stopping;
  }

  /** Kills at once (a failed start). */
  kill(): Promise<void> {
    if (this.exited === undefined) this.child.kill('SIGKILL');
    return this.exit;
  }

  private get label(): string {
    return `${this.spec.mode} ${this.spec.application} (pid ${this.child.pid ?? '-'})`;
  }

  private dispatch(type: Frame, id: number, payload: Buffer): void {
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
    this.endIfRetired();
  }

  private endIfRetired(): void {
    if (this.retiring && this.streams.size === this.abandoned.size) void this.stop(GIVE_UP_MS);
  }

  private stderr(text: string): void {
    const lines = (this.partial + text).split('\n');
    this.partial = lines.pop() ?? '';
    if (this.partial.length > MAX_LINE) {
      lines.push(`${this.partial.slice(0, MAX_LINE)}… (cut)`);
      this.partial = '';
    }
    for (const line of lines) {
      this.log(line);
      this.lastLines.push(line);
      if (this.lastLines.length > KEPT_LINES) this.lastLines.shift();
    }
  }

  /** A line in the error log, naming the application and the process. */
  log(line: string): void {
    this.errorLog.log(`${this.label}: ${line}`);
  }
}
