// The bridge processes of one Python application (ARCHITECTURE.md's worker pools): all started and
// ready before a Plan that uses them goes live, each request given to the less busy of two at
// random, a process that dies replaced while the others serve (with a back-off when it keeps
// dying), a process stuck on a request it was told to give up replaced too (it ends once its other
// requests are done), and all ended when the Plan that started them is retired or the server stops.
import type { Logger } from '../http/logger.js';
import { PythonStartError } from './start-error.js';
import { WaitingRequests } from './waiting-requests.js';
import { GIVE_UP_MS, PythonWorker, type BridgeInfo, type PythonSpec } from './worker.js';
import { lessBusyOfTwo } from './less-busy.js';

/** How long an application may take to import (and an ASGI one to finish its lifespan startup). */
const START_TIMEOUT_MS = 60_000;
/** How long a stopping process may take (an ASGI lifespan shutdown) before it is killed. */
const STOP_GRACE_MS = 15_000;
/** Restart back-off: from the first, doubled while a new process dies within STABLE_MS. */
const RESTART_FIRST_MS = 100;
const RESTART_MAX_MS = 10_000;
const STABLE_MS = 10_000;

export interface PythonPoolOptions {
  readonly spec: PythonSpec;
  readonly processes: number;
  readonly errorLog: Logger;
  /** Where each process listens for the workers' connections (the primary's), one per process. */
  readonly sockets?: readonly string[];
}

export class PythonPool {
  private readonly slots: (PythonWorker | undefined)[];
  /** Each slot's next restart delay. */
  private readonly backoff: number[];
  /** Processes starting as replacements, not serving yet. */
  private readonly starting = new Set<PythonWorker>();
  /** Stuck processes replaced already, finishing their other requests. */
  private readonly retiring = new Set<PythonWorker>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly waiting = new WaitingRequests<PythonWorker>();
  private started: Promise<void> | undefined;
  private closed = false;
  private info: BridgeInfo | undefined;
  private restarts = 0;

  constructor(private readonly options: PythonPoolOptions) {
    this.slots = new Array<PythonWorker | undefined>(options.processes).fill(undefined);
    this.backoff = new Array<number>(options.processes).fill(RESTART_FIRST_MS);
  }

  /** Every process started and its application loaded; rejects with PythonStartError. */
  start(): Promise<void> {
    this.started ??= this.startAll();
    return this.started;
  }

  /** A process for one request, at once when one is up: the less busy of two at random. */
  choose(): PythonWorker | undefined {
    return lessBusyOfTwo(this.slots);
  }

  /** A process, waiting a while when all are being replaced; undefined when none came. */
  async worker(): Promise<PythonWorker | undefined> {
    const now = this.choose();
    if (now !== undefined || this.closed) return now;
    return this.waiting.wait();
  }

  status(): Record<string, unknown> {
    const { mode, application } = this.options.spec;
    return {
      mode,
      application,
      python: this.info?.python ?? null,
      executable: this.info?.executable ?? null,
      processes: this.slots.map((w) =>
        w === undefined ? null : { pid: w.pid, requests_in_flight: w.load },
      ),
      restarts: this.restarts,
    };
  }

  /**
   * Ends every process; what they serve has ended (the Plan is retired) or the stop is forced.
   * `graceMs`: how long they may take before they are killed.
   */
  async close(graceMs = STOP_GRACE_MS): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.waiting.offer(undefined);
    await this.started?.catch(() => undefined);
    const all = [...this.slots, ...this.starting, ...this.retiring].filter((w) => w !== undefined);
    await Promise.all(all.map((w) => w.stop(graceMs)));
  }

  private async startAll(): Promise<void> {
    const { spec, processes } = this.options;
    const workers = Array.from({ length: processes }, (_, slot) => this.spawn(slot));
    try {
      const infos = await withTimeout(Promise.all(workers.map((w) => w.ready)), spec);
      this.info = infos[0];
    } catch (e) {
      await Promise.all(workers.map((w) => w.kill()));
      throw e;
    }
    workers.forEach((worker, slot) => this.attach(slot, worker));
  }

  private attach(slot: number, worker: PythonWorker): void {
    this.slots[slot] = worker;
    // One that died between its READY and now (while the others were starting) is replaced too.
    if (worker.gone) return this.lost(slot, worker, 'exited before it served');
    worker.onExit = (reason) => this.lost(slot, worker, reason);
    worker.onStuck = () => this.retire(slot, worker);
    this.waiting.offer(worker);
  }

  private spawn(slot: number): PythonWorker {
    const { spec, errorLog, sockets } = this.options;
    return new PythonWorker(spec, errorLog, sockets?.[slot]);
  }

  /**
   * A process that did not stop a request it was told to give up: a new one takes its place at
   * once, and it ends when its other requests are done (HTTP ones within their time limits; a
   * WebSocket when it closes).
   */
  private retire(slot: number, worker: PythonWorker): void {
    if (this.slots[slot] !== worker || this.closed) return;
    this.slots[slot] = undefined;
    this.retiring.add(worker);
    worker.onExit = () => this.retiring.delete(worker);
    this.options.errorLog.log(
      `${worker.spec.mode} ${worker.spec.application} (pid ${worker.pid}) did not stop a request ` +
        `it was told to give up within ${GIVE_UP_MS} ms; a new process takes its place`,
    );
    worker.retire();
    void this.startReplacement(slot);
  }

  private lost(slot: number, worker: PythonWorker, reason: string): void {
    if (this.slots[slot] === worker) this.slots[slot] = undefined;
    if (this.closed) return;
    const lived = Date.now() - worker.startedAt;
    this.options.errorLog.log(
      `${worker.spec.mode} ${worker.spec.application} (pid ${worker.pid}) ${reason}; a new process starts`,
    );
    if (lived >= STABLE_MS) this.backoff[slot] = RESTART_FIRST_MS;
    this.replace(slot);
  }

  /** A new process for the slot after its back-off, which doubles for the next time. */
  private replace(slot: number): void {
    const delay = this.backoff[slot] ?? RESTART_FIRST_MS;
    this.backoff[slot] = Math.min(delay * 2, RESTART_MAX_MS);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void this.startReplacement(slot);
    }, delay);
    this.timers.add(timer);
  }

  private async startReplacement(slot: number): Promise<void> {
    if (this.closed) return;
    const worker = this.spawn(slot);
    this.starting.add(worker);
    try {
      await withTimeout(worker.ready, this.options.spec);
    } catch (e) {
      this.starting.delete(worker);
      await worker.kill();
      if (this.closed) return;
      this.options.errorLog.log(
        `${(e as Error).message}; trying again in ${this.backoff[slot] ?? RESTART_FIRST_MS} ms`,
      );
      return this.replace(slot);
    }
    this.starting.delete(worker);
    if (this.closed) return void worker.stop(STOP_GRACE_MS);
    this.restarts++;
    this.attach(slot, worker);
  }
}

function withTimeout<T>(ready: Promise<T>, spec: PythonSpec): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new PythonStartError(
            `${spec.mode} application ${spec.application} was not ready within ${START_TIMEOUT_MS / 1000} s`,
          ),
        ),
      START_TIMEOUT_MS,
    );
  });
  return Promise.race([ready, late]).finally(() => clearTimeout(timer));
}
