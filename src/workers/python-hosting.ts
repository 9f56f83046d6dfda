// The Python processes the primary runs for all its workers (wsgi and asgi: one per application
// for the whole server). A worker compiling a configuration asks for an application's processes
// of that configuration's generation; the first ask starts them, each listening on a Unix socket
// in the shared directory, and every ask is answered with the sockets once they serve. A reload is
// a new generation, so its Plans run the application's current code; the processes of older
// generations end once the workers have left them (their old Plans retired), or are killed after
// the drain time, and those of a generation the workers did not all take end at once.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../http/logger.js';
import type { PythonSpec } from '../python/frame-channel.js';
import { PythonPool } from '../python/pool.js';
import type { FromWorker } from './messages.js';
import type { WorkerProcess } from './worker-process.js';

// setTimeout's largest delay; shutdownTimeout (a u32) may exceed it.
const MAX_TIMER_MS = 2 ** 31 - 1;

interface Hosted {
  readonly generation: number;
  readonly pool: PythonPool;
  readonly paths: readonly string[];
  /** The paths, once the processes serve. */
  readonly sockets: Promise<readonly string[]>;
}

export class PythonHosting {
  /** The configuration generation the workers serve. */
  generation = 0;
  private prepared = 0;
  /** By generation and application key. */
  private readonly hosted = new Map<string, Hosted>();
  private socketCount = 0;
  private closed = false;

  constructor(
    private readonly directory: string,
    private readonly errorLog: Logger,
  ) {}

  /** Answers a worker's ask once the processes serve, or with why they could not start. */
  answer(m: Extract<FromWorker, { type: 'host' }>, worker: WorkerProcess): void {
    this.host(m).then(
      (sockets) => worker.send({ type: 'hosted', request: m.request, sockets }),
      (e: unknown) =>
        worker.send({ type: 'hosted', request: m.request, error: (e as Error).message }),
    );
  }

  /** Each hosted application's status by module, as a serving process shows its own (metrics). */
  moduleStatus(): Record<string, unknown[]> {
    const byMode: Record<string, unknown[]> = {};
    for (const { pool } of this.hosted.values()) {
      const status = pool.status();
      (byMode[String(status.mode)] ??= []).push(status);
    }
    return byMode;
  }

  /** A generation for a configuration the workers are to prepare. */
  next(): number {
    return ++this.prepared;
  }

  /** The workers took `generation`: older processes end once unused, killed after `graceMs`. */
  committed(generation: number, graceMs: number): void {
    this.generation = generation;
    this.end((hosted) => hosted.generation < generation, Math.min(graceMs, MAX_TIMER_MS));
  }

  /** The workers did not all take `generation`: its processes end now. */
  discarded(generation: number): void {
    this.end((hosted) => hosted.generation === generation);
  }

  /** The workers have stopped: every process ends. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.hosted.values()].map((hosted) => hosted.pool.close()));
    this.hosted.clear();
  }

  private host({ generation, host }: Extract<FromWorker, { type: 'host' }>) {
    if (this.closed) return Promise.reject(new Error('Portico is stopping'));
    // A worker that started before a reload it missed: its processes would outlive it unused; it
    // is started again with the configuration the others serve.
    if (generation < this.generation)
      return Promise.reject(new Error('a newer configuration serves now'));
    const id = `${generation}\n${host.key}`;
    let hosted = this.hosted.get(id);
    if (hosted === undefined) {
      const paths = Array.from({ length: host.processes }, () =>
        join(this.directory, `python-${++this.socketCount}.sock`),
      );
      const spec = host.spec as PythonSpec;
      const pool = new PythonPool({
        spec,
        processes: paths.length,
        errorLog: this.errorLog,
        sockets: paths,
      });
      hosted = { generation, pool, paths, sockets: pool.start().then(() => paths) };
      this.hosted.set(id, hosted);
    }
    return hosted.sockets;
  }

  private end(which: (hosted: Hosted) => boolean, graceMs?: number): void {
    for (const [id, hosted] of this.hosted) {
      if (!which(hosted)) continue;
      this.hosted.delete(id);
      // No process listens there any more: a reload after reload leaves no socket file behind.
      void hosted.pool
        .close(graceMs)
        .then(() => hosted.paths.forEach((path) => rmSync(path, { force: true })))
        .catch((e: Error) => this.errorLog.log(`python: a socket file stays: ${e.message}`));
    }
  }
}
