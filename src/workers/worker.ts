// A worker process: it serves the configuration its primary sends, on listeners it shares with
// the other workers (node:cluster hands every worker the same sockets), and answers the primary's
// questions. Signals are the primary's to act on: a worker stops when the primary passes a stop
// on (or the unit's own SIGTERM reaches it, counted as the same request: server/lifecycle.ts).
import { PlanNotReady } from '../plan/compile.js';
import { RuntimeStats } from '../admin/runtime-stats.js';
import { HostedProcesses } from './hosted-processes.js';
import { IpcStore } from './ipc-store.js';
import { join } from 'node:path';
import { LmdbBuckets } from '../store/lmdb-buckets.js';
import { LmdbTables } from '../store/lmdb-tables.js';
import { serveUntilStopped } from '../server/lifecycle.js';
import { Server } from '../server/server.js';
import {
  configOf,
  messageOf,
  type ConfigData,
  type FromWorker,
  type ToWorker,
  type WorkerStats,
} from './messages.js';

const send = (message: FromWorker) => process.send?.(message);

/** Runs until the primary stops this worker; resolves with its exit status. */
export async function runWorker(): Promise<number> {
  const start = await new Promise<Extract<ToWorker, { type: 'start' }>>((resolve) => {
    const onStart = (message: unknown) => {
      const m = messageOf<ToWorker>(message, ['start']);
      if (m?.type !== 'start') return;
      process.off('message', onStart);
      resolve(m);
    };
    process.on('message', onStart);
    send({ type: 'ready' });
  });
  const shared = process.env.PORTICO_SHARED;
  if (shared === undefined) throw new Error('a worker needs PORTICO_SHARED: its primary starts it');
  // Until the server's error log is open, a failed write to a shared table goes to stderr.
  let log = (message: string): void => void process.stderr.write(`${message}\n`);
  const tables = new LmdbTables(shared, (message) => log(message));
  const buckets = new LmdbBuckets(join(shared, 'buckets'), (message) => log(message));
  const store = new IpcStore(send, {
    table: (space, options, codec) => tables.table(space, options, codec),
    buckets: (space, options) => buckets.buckets(space, options),
  });
  const hosted = new HostedProcesses(send);
  hosted.generation = start.generation;
  // Counts may come before the server has started, and it starts with the primary's processes.
  process.on('message', (message) => {
    const m = messageOf<ToWorker>(message, ['counted', 'hosted']);
    if (m?.type === 'counted') store.take(m.space, m.options, m.entries);
    else if (m?.type === 'hosted') hosted.take(m);
  });
  let server: Server;
  try {
    server = await Server.start(configOf(start.config), {
      stderr: process.stderr,
      acmeFollows: true,
      ocspFetcher: (certificate, issuer) => send({ type: 'staple-wanted', certificate, issuer }),
      store,
      workerProcesses: Number(process.env.PORTICO_WORKERS ?? 1),
      hostProcesses: hosted.ask,
      processName: `worker ${process.env.PORTICO_WORKER ?? process.pid}`,
    });
  } catch (e) {
    const failed: FromWorker = { type: 'start-failed', error: (e as Error).message };
    await new Promise<void>((resolve) => process.send?.(failed, undefined, {}, () => resolve()));
    return 1;
  }
  log = (message) => server.log(message);
  const answers = new Answers(server, hosted, server.plan.global.admin?.runtime === true);
  process.on('message', (message) => answers.take(message));
  send({ type: 'started' });
  // A worker whose primary is gone is ended by node:cluster at once, not stopped gracefully.
  return serveUntilStopped(server, {
    say: (message) => server.log(message),
    // The primary reloads: it has validated the file once and sends every worker the result.
    reload: async () => undefined,
  });
}

/** The primary's questions and reload steps, each answered by its id, and its staples. */
class Answers {
  private runtimeStats: RuntimeStats | undefined;
  /** The decision a prepared reload waits for: whether to commit, and the id to answer with. */
  private readonly decisions = new Map<
    number,
    (decision: { commit: boolean; id: number }) => void
  >();

  /** `sampled`: the admin API has /runtime, whose event-loop figures cover the time since start. */
  constructor(
    private readonly server: Server,
    private readonly hosted: HostedProcesses,
    sampled: boolean,
  ) {
    if (sampled) this.runtimeStats = new RuntimeStats();
  }

  take(message: unknown): void {
    const m = messageOf<ToWorker>(message, [
      'prepare',
      'decide',
      'stats',
      'runtime',
      'reopen',
      'acme',
      'staple',
      'metrics',
    ]);
    switch (m?.type) {
      case 'prepare':
        this.hosted.generation = m.generation;
        return void this.prepare(m.id, m.reload, m.config);
      case 'decide':
        return this.decisions.get(m.reload)?.({ commit: m.commit, id: m.id });
      case 'stats':
        return void send({ type: 'answer', id: m.id, value: this.stats() });
      case 'runtime':
        this.runtimeStats ??= new RuntimeStats();
        return void send({ type: 'answer', id: m.id, value: this.runtimeStats.read() });
      case 'metrics':
        return void this.reply(
          m.id,
          async () => this.server.metricsRegistry()?.getMetricsAsJSON() ?? [],
        );
      case 'acme':
        this.server.plan.acme?.manager.follow(m.event);
        return void send({ type: 'answer', id: m.id, value: true });
      case 'staple':
        return this.server.plan.ocsp?.staple(m.event);
      case 'reopen':
        return void this.reply(m.id, async () => (await this.server.reopenLogs(), true));
    }
  }

  /** Answers `id` with what `answer` resolves to, or says why it could not. */
  private async reply(id: number, answer: () => Promise<unknown>): Promise<void> {
    try {
      send({ type: 'answer', id, value: await answer() });
    } catch (e) {
      send({ type: 'failed', id, error: (e as Error).message, invalid: false });
    }
  }

  /** Makes the reload ready, says so, and waits for the primary's word to swap it in. */
  private async prepare(id: number, reload: number, config: ConfigData): Promise<void> {
    let decided = id;
    try {
      const committed = await this.server.reloadWhenAgreed(configOf(config), async () => {
        send({ type: 'answer', id, value: 'prepared' });
        const decision = await new Promise<{ commit: boolean; id: number }>((resolve) =>
          this.decisions.set(reload, resolve),
        );
        decided = decision.id;
        return decision.commit;
      });
      send({ type: 'answer', id: decided, value: committed });
    } catch (e) {
      const error = (e as Error).message;
      send({ type: 'failed', id: decided, error, invalid: e instanceof PlanNotReady });
    } finally {
      this.decisions.delete(reload);
    }
  }

  private stats(): WorkerStats {
    const { listeners, ...extra } = this.server.status() as { listeners: string[] };
    return {
      requests_total: this.server.requestsTotal,
      connections_active: this.server.connectionsActive,
      listeners,
      extra: pick(extra, ['modules']),
    };
  }
}

const pick = (from: Record<string, unknown>, keys: readonly string[]) =>
  Object.fromEntries(keys.filter((k) => from[k] !== undefined).map((k) => [k, from[k]]));
