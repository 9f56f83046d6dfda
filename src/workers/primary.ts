// The primary process of a server with several workers: it holds the validated configuration,
// the signals, the admin API, the error log's own lines, the ACME orders, the OCSP staples, the
// shared counts and the Python processes (python-hosting.ts), and supervises the worker processes
// that serve (worker.ts). A reload is validated once, here, then prepared by every worker and
// swapped in by all of them or by none. A worker that dies is replaced, with a back-off when it
// keeps dying (restart-backoff.ts).
import { setTimeout as sleep } from 'node:timers/promises';
import { AdminApi, type AdminSubject } from '../admin/admin-api.js';
import { withDefaults } from '../config/defaults.js';
import { effectiveConfig } from '../config/effective.js';
import type { LoadResult } from '../config/load.js';
import type { Config } from '../config/validate.js';
import { ErrorLog } from '../log/error-log.js';
import { listenerSpecs } from '../plan/listener-spec.js';
import type { Stoppable } from '../server/lifecycle.js';
import { reclaimStaleSockets } from '../server/unix-socket.js';
import {
  reloadFailure,
  reloadFromSource,
  type ReloadOutcome,
} from '../server/reload-from-source.js';
import { ServerMetrics } from '../metrics/server-metrics.js';
import type { AcmeEvent } from '../tls/acme-manager.js';
import { SharedCounts } from './shared-counts.js';
import { SharedDirectory } from './shared-directory.js';
import { FetchedStaples } from './fetched-staples.js';
import type { ToWorker, WorkerStats } from './messages.js';
import { OrderedCertificates } from './ordered-certificates.js';
import { PythonHosting } from './python-hosting.js';
import { workerCount } from './worker-count.js';
import { primaryStatus, summedMetrics, workerRuntimes } from './worker-reports.js';
import { CauseLog, RestartBackoff } from './restart-backoff.js';
import { WorkerProcess, type Decide } from './worker-process.js';

export interface PrimaryOptions {
  readonly workers: number;
  /** Where the error log goes when `errorLogFilePath` is not set. */
  readonly stderr?: NodeJS.WritableStream;
  /** Where a reload reads the configuration from (SIGHUP, the admin API's /reload). */
  readonly reloadSource?: () => Promise<LoadResult>;
}

/** A worker's place: the process in it now, and how often it was replaced. */
interface Slot {
  readonly place: number;
  process: WorkerProcess;
  restarts: number;
  readonly backoff: RestartBackoff;
}

export class Primary implements AdminSubject, Stoppable {
  readonly startedAt = new Date();
  draining = false;
  reloads = 0;
  lastReload: Date | undefined;
  /** The listeners the workers serve, as the last start or reload left them. */
  listenerUrls: readonly string[] = [];
  private readonly slots: Slot[] = [];
  private readonly admin: AdminApi;
  private readonly causes: CauseLog;
  private readonly certificates: OrderedCertificates;
  private readonly staples: FetchedStaples;
  /** What the workers count together. */
  private readonly counts = new SharedCounts();
  /** Where the workers keep the tables they share, and reach the Python processes. */
  private readonly shared = new SharedDirectory();
  private readonly python: PythonHosting;
  /** The primary's own: reloads, certificates, its process; made once `metrics` is on. */
  private ownMetrics: ServerMetrics | undefined;
  private stopping: Promise<void> | undefined;
  private reloading: Promise<unknown> = Promise.resolve();
  private reloadNumber = 0;
  private errorLogPath: string | undefined;
  /** Aborted when the server stops: a replacement waiting out its back-off gives up. */
  private readonly stopped = new AbortController();

  private constructor(
    private current: Config,
    private errorLog: ErrorLog,
    private readonly options: PrimaryOptions,
  ) {
    this.admin = new AdminApi(this);
    this.errorLogPath = current.global.errorLogFilePath;
    this.causes = new CauseLog((line) => this.log(line));
    this.certificates = new OrderedCertificates(
      (line) => this.log(line),
      (event) => this.publish(event),
    );
    this.staples = new FetchedStaples(this, (message) => this.tellAll(message));
    this.python = new PythonHosting(this.shared.path, { log: (line) => this.log(line) });
  }

  /** Starts every worker; rejects with the first one's reason when any cannot serve. */
  static async start(config: Config, options: PrimaryOptions): Promise<Primary> {
    const errorLog = await ErrorLog.open(config.global.errorLogFilePath, options.stderr);
    const primary = new Primary(config, errorLog, options);
    try {
      // node:cluster binds the workers' Unix sockets here, so a stale one is cleared here first.
      await reclaimStaleSockets(listenerSpecs(config.global));
      for (let i = 0; i < options.workers; i++)
        primary.slots.push({
          place: i + 1,
          process: primary.fork(i + 1),
          restarts: 0,
          backoff: new RestartBackoff(),
        });
      await Promise.all(primary.slots.map((slot) => slot.process.started));
      for (const slot of primary.slots) primary.watch(slot);
      await primary.readListeners();
      primary.certificates.manage(config);
      primary.staples.manage(config);
      primary.measure();
      await primary.admin.start(primary.global);
    } catch (e) {
      primary.stopping = primary.release();
      await primary.stopping;
      await errorLog.close();
      throw e;
    }
    return primary;
  }

  get adminUrl(): string | undefined {
    return this.admin.url;
  }

  get workerCount(): number {
    return this.slots.length;
  }

  log(message: string): void {
    this.errorLog.log(message);
  }

  // ── what the admin API reads ─────────────────────────────────────────────────────────────
  status(): Promise<Record<string, unknown>> {
    const { startedAt, reloads, lastReload, listenerUrls: listeners } = this;
    return primaryStatus(
      this.slots,
      { startedAt, reloads, lastReload, listeners },
      this.certificates.status(),
    );
  }

  async runtime(own: Record<string, unknown>): Promise<Record<string, unknown>> {
    return { ...own, workers: await workerRuntimes(this.slots) };
  }

  config(): unknown {
    return effectiveConfig(this.current);
  }

  metrics(): Promise<string> {
    return summedMetrics(this.slots, this.ownMetrics?.registry);
  }

  private measure(): void {
    if (this.global.admin?.metrics === true)
      this.ownMetrics ??= new ServerMetrics('primary', {
        certificates: () => this.certificates.status() ?? [],
        modules: () => this.python.moduleStatus(),
      });
  }

  // ── reloads ──────────────────────────────────────────────────────────────────────────────
  reloadFromSource(by?: string): Promise<ReloadOutcome> {
    return reloadFromSource({
      source: this.options.reloadSource,
      stopping: () => this.stopping !== undefined,
      serialized: (task) => this.serialized(task),
      apply: (config) => this.applyEverywhere(config),
      log: (line) => this.log(line),
      listenerUrls: () => this.listenerUrls,
      by,
    }).then((outcome) => {
      this.ownMetrics?.reloaded(outcome.ok);
      return outcome;
    });
  }

  /** Reloads, and workers catching up with one, run one at a time in the order asked. */
  private serialized<T>(task: () => Promise<T>): Promise<T> {
    const result = this.reloading.then(task);
    this.reloading = result.catch(() => undefined);
    return result;
  }

  /**
   * Every serving worker prepares the configuration; all swap it in once all are ready, or none
   * does. A worker forked after the reload began catches up once it serves (`catchUp`).
   */
  private async applyEverywhere(config: Config): Promise<ReloadOutcome> {
    // A worker still starting (a replacement) is asked too, once it serves: otherwise it would
    // serve the old configuration after the reload was announced, until it caught up.
    await Promise.all(this.slots.map((slot) => slot.process.started.catch(() => undefined)));
    const asked = this.slots.map((slot) => slot.process).filter((p) => p.serving);
    const bound = new Set(listenerSpecs(this.current.global).flatMap((s) => s.path ?? []));
    try {
      await reclaimStaleSockets(listenerSpecs(config.global), bound);
    } catch (e) {
      return reloadFailure(e);
    }
    const generation = this.python.next();
    const prepared = await Promise.allSettled(
      asked.map((p) => p.prepare(config, ++this.reloadNumber, generation)),
    );
    const failure = prepared.find((r) => r.status === 'rejected');
    if (failure !== undefined) {
      await Promise.all(prepared.map((r) => (r.status === 'fulfilled' ? r.value(false) : null)));
      this.python.discarded(generation);
      const reason = failure.reason as Error & { invalid?: boolean };
      return reloadFailure(reason, reason.invalid === true);
    }
    // A worker replaced from now on starts with what the others now serve.
    this.current = config;
    const decided = await Promise.allSettled(
      prepared.map((r) => (r as PromiseFulfilledResult<Decide>).value(true)),
    );
    // Those that committed serve the new configuration: one that could not is replaced with it.
    decided.forEach((r, i) => {
      if (r.status === 'fulfilled') return;
      this.log(
        `worker ${asked[i]!.pid} did not take the reload (${(r.reason as Error).message}); replacing it`,
      );
      asked[i]!.worker.process.kill('SIGKILL');
    });
    this.reloads++;
    this.lastReload = new Date();
    this.python.committed(generation, this.global.shutdownTimeout);
    await this.followErrorLog(config);
    await this.readListeners();
    this.certificates.manage(config);
    this.staples.manage(config);
    this.measure();
    const count = workerCount(config.global.workers);
    if (count !== this.slots.length)
      this.log(`workers: ${count} takes effect when Portico restarts (${this.slots.length} now)`);
    // The admin listener restarts after this reload's own answer has left through it.
    setImmediate(() => this.admin.reloaded(this.global));
    return { ok: true, reloads: this.reloads };
  }

  /** A worker that started with an older configuration than the others serve takes theirs. */
  private async catchUp(worker: WorkerProcess): Promise<void> {
    if (!worker.serving || worker.config === this.current) return;
    try {
      await (
        await worker.prepare(this.current, ++this.reloadNumber, this.python.generation)
      )(true);
    } catch (e) {
      this.log(
        `worker ${worker.pid} could not take the current configuration (${(e as Error).message}); replacing it`,
      );
      worker.worker.process.kill('SIGKILL');
    }
  }

  /** The primary's own lines go where the workers' now go. */
  private async followErrorLog(config: Config): Promise<void> {
    const path = config.global.errorLogFilePath;
    if (path === this.errorLogPath) return;
    try {
      const old = this.errorLog;
      this.errorLog = await ErrorLog.open(path, this.options.stderr);
      this.errorLogPath = path;
      await old.close();
    } catch (e) {
      this.log(`the error log stays where it was: ${(e as Error).message}`);
    }
  }

  // ── stopping, logs ───────────────────────────────────────────────────────────────────────
  /** Graceful: every worker drains (each within `shutdownTimeout`), then the admin API closes. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.draining = true;
      this.stopped.abort();
      await this.reloading;
      await this.release();
      await this.admin.close();
      this.log('Portico stopped');
      await this.errorLog.close();
    })();
    return this.stopping;
  }

  /** What the workers and the primary's own upkeep hold: ended, with the workers. */
  private async release(): Promise<void> {
    this.certificates.close();
    this.staples.close();
    this.counts.close();
    await this.stopWorkers();
    await this.python.close();
    this.shared.remove();
  }

  /** A second stop signal: every worker is told again, which stops it at once. */
  stopNow(signal: NodeJS.Signals): void {
    for (const slot of this.slots) slot.process.send({ relayedSignal: signal });
  }

  /** The primary's logs and every serving worker's; a worker that could not is named. */
  async reopenLogs(): Promise<void> {
    const serving = this.slots.map((slot) => slot.process).filter((p) => p.serving);
    const [, ...workers] = await Promise.allSettled([
      this.errorLog.reopen(),
      ...serving.map((p) => p.ask({ type: 'reopen' })),
    ]);
    workers.forEach((r, i) => {
      if (r.status === 'rejected')
        this.log(
          `worker ${serving[i]!.pid} did not reopen its logs: ${(r.reason as Error).message}`,
        );
    });
  }

  private async stopWorkers(): Promise<void> {
    for (const slot of this.slots) {
      // One still starting has no signal handlers yet: the default action ends it.
      if (slot.process.serving) slot.process.send({ relayedSignal: 'SIGTERM' });
      else slot.process.worker.process.kill('SIGTERM');
    }
    await Promise.all(this.slots.map((slot) => slot.process.exited));
  }

  // ── workers ──────────────────────────────────────────────────────────────────────────────
  private get global() {
    return withDefaults(this.current.global, this.current.properties);
  }

  /** `place`: the slot's number from 1, the worker's name in its metrics. */
  private fork(place: number): WorkerProcess {
    const count = this.options.workers;
    const serving = { config: this.current, generation: this.python.generation };
    return WorkerProcess.fork({ place, count }, serving, this.shared.path, (m, from) => {
      if (m.type === 'staple-wanted') return this.staples.shown(m.certificate, m.issuer);
      if (m.type === 'host') return this.python.answer(m, from);
      this.tellAll(this.counts.add(m));
    });
  }

  private tellAll(message: ToWorker): void {
    for (const slot of this.slots) if (slot.process.serving) slot.process.send(message);
  }

  /** What a worker that starts now must be told: staples, live counts, certificates, challenges. */
  private async brief(worker: WorkerProcess): Promise<void> {
    this.staples.brief(worker);
    for (const counted of this.counts.briefing()) worker.send(counted);
    for (const event of this.certificates.current())
      await worker.ask({ type: 'acme', event }).catch(() => undefined);
  }

  /** Replaces the slot's process when it dies, unless the server is stopping. */
  private watch(slot: Slot): void {
    const current = slot.process;
    void current.exited.then(async (how) => {
      if (this.stopping) return;
      const delay = slot.backoff.next(Date.now() - current.startedAt);
      this.causes.report(
        how,
        `worker ${current.pid} ${how}; ${delay === 0 ? 'starting another' : `starting another in ${delay} ms`}`,
      );
      // Cut short by a stop, which must not wait for it.
      if (delay > 0)
        await sleep(delay, undefined, { signal: this.stopped.signal }).catch(() => undefined);
      // A reload under way settles first: the replacement starts with what the others serve.
      await this.reloading;
      if (this.stopping) return;
      slot.process = this.fork(slot.place);
      slot.restarts++;
      this.watch(slot);
      const started = slot.process;
      await started.started.catch(() => undefined);
      if (!started.serving) return;
      await this.brief(started);
      // A reload that began while it started did not ask it.
      await this.serialized(() => this.catchUp(started));
    });
  }

  /** Every serving worker has taken the event before this resolves (the CA validates next). */
  private async publish(event: AcmeEvent): Promise<void> {
    this.staples.obtained(event);
    await Promise.all(
      this.slots
        .filter((slot) => slot.process.serving)
        .map((slot) => slot.process.ask({ type: 'acme', event }).catch(() => undefined)),
    );
  }

  private async readListeners(): Promise<void> {
    for (const slot of this.slots) {
      const stats = await slot.process.ask<WorkerStats>({ type: 'stats' }).catch(() => undefined);
      if (stats === undefined) continue;
      this.listenerUrls = stats.listeners;
      return;
    }
  }
}
