// A worker's connection to a bridge process its primary runs for every worker (a Unix socket in
// the primary's private directory): the same frames as a process's stdio, the stream ids this
// connection's own. The bridge greets it with READY; GOAWAY says the process is being replaced,
// so the connection takes no new stream and closes once those it carries have ended.
import { createConnection, type Socket } from 'node:net';
import type { Logger } from '../http/logger.js';
import { FrameChannel, type PythonSpec } from './frame-channel.js';
import { Frame, FrameReader } from './frames.js';
import { PythonStartError } from './start-error.js';
import type { BridgeInfo } from './worker.js';

/**
 * How long a bridge has to greet a connection. One that accepts but never greets (its loop
 * blocked) would hold a reload's prepare, and with it a stop, for ever; past this the connection
 * is closed and counts as refused.
 */
const READY_MS = 10_000;

export class PythonConnection extends FrameChannel {
  /** Resolves once the bridge has greeted it; rejects when it could not connect. */
  readonly ready: Promise<void>;
  /** Called once when it has closed, whatever the reason. */
  onClose: (() => void) | undefined;
  /** Called once when the bridge says GOAWAY. */
  onGoAway: (() => void) | undefined;
  /** What the bridge said of itself when it greeted this connection. */
  info: BridgeInfo | undefined;
  private readonly socket: Socket;
  private draining = false;

  constructor(
    spec: PythonSpec,
    errorLog: Logger,
    readonly path: string,
  ) {
    super(spec, errorLog);
    this.socket = createConnection(path);
    let settle: { resolve(): void; reject(e: Error): void } | undefined;
    this.ready = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
    // A failure is read where it is awaited; an unawaited one (a reconnection) is not unhandled.
    this.ready.catch(() => undefined);
    const greeting = setTimeout(() => this.socket.destroy(), READY_MS).unref();
    const reader = new FrameReader((type, id, payload) => {
      if (id !== 0) return this.dispatch(type, id, payload);
      if (type === Frame.Ready) {
        clearTimeout(greeting);
        this.info = JSON.parse(payload.toString()) as BridgeInfo;
        settle?.resolve();
        settle = undefined;
      } else if (type === Frame.GoAway) this.goAway();
    });
    this.socket.on('data', (chunk: Buffer) => {
      try {
        reader.push(chunk);
      } catch (e) {
        this.log(
          `the bridge broke its framing (${(e as Error).message}); the connection is closed`,
        );
        this.socket.destroy();
      }
    });
    this.socket.on('error', () => undefined);
    this.socket.once('close', () => {
      clearTimeout(greeting);
      settle?.reject(
        new PythonStartError(`${spec.mode} application ${spec.application}: no process at ${path}`),
      );
      settle = undefined;
      this.lose('closed the connection');
      this.onClose?.();
    });
  }

  get pid(): number | undefined {
    return this.info?.pid;
  }

  /** Whether it has closed. */
  get lost(): boolean {
    return this.lostBecause !== undefined;
  }

  /** Whether it may take new streams. */
  get usable(): boolean {
    return !this.lost && !this.draining;
  }

  write(data: Buffer): void {
    if (this.lostBecause === undefined) this.socket.write(data);
  }

  /** Closes at once: what it carries has ended (the Plan is retired) or the stop is forced. */
  close(): void {
    this.socket.destroy();
  }

  private goAway(): void {
    this.draining = true;
    const goAway = this.onGoAway;
    this.onGoAway = undefined;
    goAway?.();
    this.streamEnded();
  }

  /** Draining: closed once only streams given up on are left (the bridge ends those). */
  protected override streamEnded(): void {
    if (this.draining && this.streams.size === this.abandoned.size) this.socket.end();
  }
}
