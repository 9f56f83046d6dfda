// One bridge process (python/portico_bridge.py) serving one application: started, told apart from
// a failed import, given streams, and ended. Its error output goes to the error log line by line;
// when it dies, every stream it held learns so at once. A stream given up on (a time limit ran
// out) that the application does not end soon after it is told to is stuck: a thread, a task or,
// for wsgid, the whole process lost to it; the pool replaces such a process. With a socket, the
// process serves the connections of every worker (connection.ts) instead of its own stdio, and
// says itself when it is stuck.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../http/logger.js';
import { inWords } from '../config/system-errors.js';
import { FrameChannel, type PythonSpec } from './frame-channel.js';
import { Frame, FrameReader } from './frames.js';
import { PythonStartError, startFailure } from './start-error.js';

export type { PythonMode, PythonSpec, StreamEvents } from './frame-channel.js';

export const BRIDGE = fileURLToPath(new URL('../../python/portico_bridge.py', import.meta.url));

/** What the bridge says of itself once the application is loaded. */
export interface BridgeInfo {
  readonly python: string;
  readonly executable: string;
  readonly pid: number;
}

/**
 * How long an application has to end a request it was told to give up before its process counts
 * as stuck; also how long a process retired for that has to exit once its other requests are done.
 */
export const GIVE_UP_MS = 1_000;

/** Longest error-output line kept whole; the rest of it is cut. */
const MAX_LINE = 16 * 1024;
/** Error-output lines kept to explain a process that died before it was ready. */
const KEPT_LINES = 20;

export class PythonWorker extends FrameChannel {
  readonly ready: Promise<BridgeInfo>;
  /** Called once when the process has exited, whatever the reason. */
  onExit: ((reason: string) => void) | undefined;
  /** Called once when a stream given up on is still open GIVE_UP_MS after. */
  onStuck: (() => void) | undefined;
  readonly startedAt = Date.now();
  private readonly child: ChildProcessWithoutNullStreams;
  /** Retired: it ends once only streams given up on are left. */
  private retiring = false;
  private stopping: Promise<void> | undefined;
  private readonly exit: Promise<void>;
  private readonly lastLines: string[] = [];
  private partial = '';

  /** `socket`: where it listens for the workers' connections, instead of serving its stdio. */
  constructor(
    spec: PythonSpec,
    errorLog: Logger,
    private readonly socket?: string,
  ) {
    super(spec, errorLog);
    const { mode, executable, application, clearImportPath, threads } = spec;
    const args = [BRIDGE, mode, application, clearImportPath ? '1' : '0', String(threads)];
    this.child = spawn(executable, socket === undefined ? args : [...args, socket], {
      cwd: dirname(application),
      env: { ...process.env, ...spec.environment },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let settle: { resolve(info: BridgeInfo): void; reject(e: Error): void } | undefined;
    this.ready = new Promise<BridgeInfo>((resolve, reject) => (settle = { resolve, reject }));
    // A failure is read where it is awaited; an unawaited one (a restart) must not be unhandled.
    this.ready.catch(() => undefined);
    const reader = new FrameReader((type, id, payload) => {
      if (id !== 0) return this.dispatch(type, id, payload);
      const waiting = settle;
      if (type === Frame.Stuck) return this.stuck();
      settle = undefined;
      if (type === Frame.Ready) waiting?.resolve(JSON.parse(payload.toString()) as BridgeInfo);
      else if (type === Frame.StartFailed && waiting)
        void startFailure(payload, spec, (line) => this.log(line)).then(waiting.reject);
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
        if (this.gone) return;
        if (this.partial !== '') this.stderr('\n');
        const why = this.lastLines.length > 0 ? `: ${this.lastLines.join('\n')}` : '';
        settle?.reject(new PythonStartError(`${this.label} ${reason} before it was ready${why}`));
        settle = undefined;
        this.lose(reason);
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

  /** Whether the process has exited (`onExit` has been called, if it was set). */
  get gone(): boolean {
    return this.lostBecause !== undefined;
  }

  /**
   * If the application has had a stream given up on in hand for GIVE_UP_MS since without ending
   * it, the process is stuck (`onStuck`).
   */
  protected override gaveUp(id: number): void {
    setTimeout(() => {
      if (!this.abandoned.has(id) || this.gone) return;
      // Still waiting its turn behind others (which have limits of their own): the bridge ends it
      // as soon as it comes up.
      if (!this.serving(id)) return this.gaveUp(id);
      this.stuck();
    }, GIVE_UP_MS).unref();
  }

  private stuck(): void {
    const stuck = this.onStuck;
    this.onStuck = undefined;
    stuck?.();
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

  /**
   * Serves the streams it has, then ends; streams given up on are not waited for. Over a socket,
   * the bridge has stopped taking connections and ends once the workers have left it.
   */
  retire(): void {
    if (this.socket !== undefined) return;
    this.retiring = true;
    this.streamEnded();
  }

  write(data: Buffer): void {
    if (!this.gone) this.child.stdin.write(data);
  }

  /**
   * Ends the process: its input closes (the bridge finishes, or over a socket, takes no new
   * connection and finishes those it has; an ASGI application runs its lifespan shutdown), and
   * after `graceMs` it is killed.
   */
  stop(graceMs: number): Promise<void> {
    if (this.gone) return Promise.resolve();
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
    if (!this.gone) this.child.kill('SIGKILL');
    return this.exit;
  }

  protected override streamEnded(): void {
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
}
