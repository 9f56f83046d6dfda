// One worker process as the primary sees it: started with a configuration, asked questions by id
// (each with a time limit, and failed at once if the worker dies), told what the primary decides.
import cluster, { type Worker } from 'node:cluster';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config/validate.js';
import { configData, messageOf, type FromWorker, type ToWorker } from './messages.js';

// A worker answers from its event loop; one this late is stuck, and its answer is not waited for.
const ANSWER_MS = 10_000;
// Messages waiting to be written to one worker beyond which shared-store counts are dropped.
const MAX_UNSENT = 10_000;

type Question = ToWorker extends infer Q
  ? Q extends { id: number }
    ? Omit<Q, 'id'>
    : never
  : never;

type Told = (
  message: Extract<FromWorker, { type: 'count' | 'staple-wanted' | 'host' }>,
  from: WorkerProcess,
) => void;

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout | undefined;
}

/** Tells a worker whether to swap in what it prepared; resolves once it has. */
export type Decide = (commit: boolean) => Promise<void>;

let clusterSetUp = false;

/** Workers run worker-main beside this file (.js built, .ts under tsx), with this process's flags. */
function setUpCluster(): void {
  if (clusterSetUp) return;
  clusterSetUp = true;
  const here = fileURLToPath(import.meta.url);
  // Workers accept from the shared sockets themselves (docs/running.md, Worker processes, says why).
  cluster.schedulingPolicy = cluster.SCHED_NONE;
  cluster.setupPrimary({
    exec: join(dirname(here), `worker-main${extname(here)}`),
    execArgv: process.execArgv,
    serialization: 'advanced',
    args: [],
  });
}

export class WorkerProcess {
  /**
   * Starts worker `place` (from 1: its name in its metrics) of `count`, with `config` (its
   * `generation`), keeping the tables the workers share in `shared`.
   */
  static fork(
    { place, count }: { readonly place: number; readonly count: number },
    { config, generation }: { readonly config: Config; readonly generation: number },
    shared: string,
    told: Told,
  ): WorkerProcess {
    setUpCluster();
    // Workers act on relayed-signal messages as a server under the launcher does.
    const env = {
      PORTICO_RELAYED: '1',
      PORTICO_WORKER: String(place),
      PORTICO_WORKERS: String(count),
      PORTICO_SHARED: shared,
    };
    return new WorkerProcess(cluster.fork(env), config, generation, told);
  }

  readonly startedAt = Date.now();
  /** Resolves once it serves; rejects with why it could not start. */
  readonly started: Promise<void>;
  /** Resolves with how it ended. */
  readonly exited: Promise<string>;
  /** True once it serves, until it exits. */
  serving = false;
  /** Why it is gone, once it has exited. */
  private gone: string | undefined;
  private startFailure: string | undefined;
  private nextId = 1;
  /** Messages handed to the channel and not yet written to it. */
  private unsent = 0;
  private readonly pending = new Map<number, Pending>();

  /**
   * `config`: what it starts with, and then the configuration it serves (the primary sets it after
   * each reload the worker takes), with its `generation`. `told`: what the worker says without
   * being asked (a count for the shared store, a certificate to fetch a staple for, processes for
   * the primary to run).
   */
  constructor(
    readonly worker: Worker,
    public config: Config,
    public generation: number,
    told: Told,
  ) {
    this.exited = new Promise((resolve) =>
      worker.on('exit', (code: number | null, signal: string | null) => {
        const how =
          this.startFailure !== undefined
            ? `could not start: ${this.startFailure}`
            : signal
              ? `was killed by ${signal}`
              : `exited with status ${code}`;
        this.serving = false;
        this.gone = `worker ${this.pid} ${how}`;
        for (const p of this.pending.values()) {
          clearTimeout(p.timer);
          p.reject(new Error(this.gone));
        }
        this.pending.clear();
        resolve(how);
      }),
    );
    worker.on('error', () => this.broken());
    this.started = new Promise((resolve, reject) => {
      worker.on('message', (message: unknown) => {
        const m = messageOf<FromWorker>(message, [
          'ready',
          'started',
          'start-failed',
          'answer',
          'failed',
          'count',
          'staple-wanted',
          'host',
        ]);
        if (m?.type === 'ready')
          this.send({ type: 'start', config: configData(config), generation });
        else if (m?.type === 'count' || m?.type === 'staple-wanted' || m?.type === 'host')
          told(m, this);
        else if (m?.type === 'started') {
          this.serving = true;
          resolve();
        } else if (m?.type === 'start-failed') {
          this.startFailure = m.error;
          reject(new Error(m.error));
        } else if (m) this.settle(m);
      });
      void this.exited.then((how) => reject(new Error(`a worker process ${how}`)));
    });
    // Known by the caller through `started`; not an unhandled rejection before it looks.
    this.started.catch(() => undefined);
  }

  get pid(): number {
    return this.worker.process.pid ?? 0;
  }

  send(message: ToWorker | { relayedSignal: NodeJS.Signals }): void {
    if (!this.worker.isConnected()) return;
    // A worker that stopped reading would have counts pile up here without end: they are dropped
    // (a later count of the same key carries the news), every other message is kept.
    if (this.unsent >= MAX_UNSENT && (message as { type?: string }).type === 'counted') return;
    this.unsent++;
    this.worker.send(message, undefined, {}, (error) => {
      this.unsent--;
      if (error) this.broken();
    });
  }

  /**
   * A message to a worker that has just died fails (EPIPE), reported rather than thrown: the
   * channel is broken, so the process is made to end, and its exit is handled as any other.
   */
  private broken(): void {
    const child = this.worker.process;
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }

  /** The worker's answer; `wait` false: no time limit (a reload that starts applications). */
  ask<T>(question: Question, wait = true): Promise<T> {
    // One starting has no one listening for questions yet; one gone, nobody at all.
    if (!this.serving)
      return Promise.reject(new Error(this.gone ?? `worker ${this.pid} is starting`));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = wait
        ? setTimeout(() => {
            this.pending.delete(id);
            reject(new Error(`worker ${this.pid} did not answer within ${ANSWER_MS} ms`));
          }, ANSWER_MS)
        : undefined;
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject, timer });
      this.send({ ...question, id } as ToWorker);
    });
  }

  /**
   * Asks it to prepare reload number `reload` of `config` (its `generation`); resolves with how to
   * tell it the decision.
   */
  async prepare(config: Config, reload: number, generation: number): Promise<Decide> {
    // Applications may take a while to start: no time limit but the worker's own.
    await this.ask({ type: 'prepare', reload, config: configData(config), generation }, false);
    return async (commit) => {
      await this.ask({ type: 'decide', reload, commit }, false);
      if (!commit) return;
      this.config = config;
      this.generation = generation;
    };
  }

  private settle(m: Extract<FromWorker, { id: number }>): void {
    const p = this.pending.get(m.id);
    if (p === undefined) return;
    this.pending.delete(m.id);
    clearTimeout(p.timer);
    if (m.type === 'answer') p.resolve(m.value);
    else p.reject(Object.assign(new Error(m.error), { invalid: m.invalid }));
  }
}
