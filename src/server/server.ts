// The running server: logs, the compiled Plan, the listeners, and the resources Plans lease.
// Starting compiles and binds everything or nothing; stopping drains in-flight requests within
// `shutdownTimeout`, then returns every Plan's leases and closes every handle it owns.
import { effectiveConfig } from '../config/effective.js';
import type { Config } from '../config/validate.js';
import type { Logger } from '../http/logger.js';
import type { ErrorLog } from '../log/error-log.js';
import { MODULES } from '../modules/registry.js';
import { compilePlan, type CompileServices, type Plan } from '../plan/compile.js';
import { MemoryStore } from '../store/memory-store.js';
import { heldLogFiles } from '../plan/plan-logs.js';
import { Resources } from '../plan/resources.js';
import { ErrorResponder } from './error-responder.js';
import type { Registry } from 'prom-client';
import { ListenerSet, type ListenerReload } from './listener-set.js';
import { reloadFailure, reloadFromSource, type ReloadOutcome } from './reload-from-source.js';
import { RequestHandler } from './request-handler.js';
import {
  closeLogs,
  closeReplaced,
  openLogs,
  refusedEntry,
  reopenChanged,
  type Logs,
} from './server-logs.js';
import { FinishedRequests } from './finished-requests.js';
import { statusFields } from './status-fields.js';
import { SurgeGc } from './surge-gc.js';
import type { ControlPlane, ServerOptions } from './server-options.js';
import { manageCertificates, prefetchOcsp } from './tls-upkeep.js';

export type { ServerOptions } from './server-options.js';

export class Server {
  readonly startedAt = new Date();
  reloads = 0;
  lastReload: Date | undefined;
  /** True from the start of a graceful stop: /health answers 503. */
  draining = false;
  private readonly listeners: ListenerSet;
  private readonly handler: RequestHandler;
  private readonly surgeGc: SurgeGc;
  private readonly finished: FinishedRequests;
  private stopping: Promise<void> | undefined;
  private readonly control: ControlPlane | undefined;
  /** Reloads run one at a time, in the order asked. */
  private reloading: Promise<unknown> = Promise.resolve();
  /** Listeners and protocol servers a reload retired, draining in the background. */
  private readonly retiring = new Set<Promise<unknown>>();
  /** The ACME stores already named in the log. */
  private readonly announced = new WeakSet<object>();
  /** Plans a reload replaced whose requests are still in flight: their leases go when those end. */
  private readonly retiredPlans = new Set<Plan>();

  private constructor(
    plan: Plan,
    private readonly services: Services,
    /** Shared with `services.errorLog`, so every writer follows a reload that changes the file. */
    private readonly current: { logs: Logs },
  ) {
    this.handler = new RequestHandler(plan, new ErrorResponder(services.errorLog));
    this.finished = new FinishedRequests(this.handler, services.options.processName ?? 'server', {
      connections: () => this.connectionsActive,
      traffic: () => this.listeners.traffic(),
      modules: () => this.plan.moduleStatus(),
      certificates: () => this.plan.acme?.manager.status() ?? [],
    });
    this.listeners = new ListenerSet({
      dispatch: this.handler.handle.bind(this.handler),
      limits: services.options.limits,
      // Before any host could be chosen: the global access log.
      onRefused: (r) => this.plan.hosts.fallback.logs.access?.log(refusedEntry(r)),
      log: (message) => this.log(message),
    });
    this.control = services.options.controlPlane?.(this);
    this.surgeGc = new SurgeGc({
      takePeak: () => this.listeners.takePeak(),
      open: () => this.connectionsActive,
      requests: () => this.requestsTotal,
      rss: () => process.memoryUsage.rss(),
    });
  }

  static async start(config: Config, options: ServerOptions = {}): Promise<Server> {
    const resources = new Resources();
    const current = { logs: await openLogs(config, resources, options.stderr) };
    const errorLog: Logger = { log: (message) => current.logs.error.log(message) };
    const services: Services = {
      resources,
      modules: options.modules ?? MODULES,
      errorLog,
      ...(options.auth ? { auth: options.auth } : {}),
      ...(options.acmeFollows ? { acmeFollows: true } : {}),
      ...(options.ocspFetcher ? { ocspFetcher: options.ocspFetcher } : {}),
      store: options.store ?? new MemoryStore(),
      workerProcesses: options.workerProcesses ?? 1,
      ...(options.hostProcesses ? { hostProcesses: options.hostProcesses } : {}),
      ...(options.stderr ? { stderr: options.stderr } : {}),
      options,
    };
    let plan: Plan | undefined;
    try {
      applyEnvironment(config);
      plan = compilePlan(config, services);
      await plan.ready();
      const server = new Server(plan, services, current);
      await server.finished.prepare(plan.global.admin);
      server.finished.follow(plan);
      await server.openListeners(plan);
      try {
        await server.control?.start(plan.global);
      } catch (e) {
        await server.listeners.close(0);
        throw e;
      }
      return server;
    } catch (e) {
      await plan?.leases.release();
      await closeLogs(current.logs);
      throw e;
    }
  }

  get plan(): Plan {
    return this.handler.plan;
  }

  /** Listener ids (`http://*:8080`) with the port actually bound. */
  get listenerUrls(): string[] {
    return this.listeners.urls;
  }

  /** The admin API's URL while it listens. */
  get adminUrl(): string | undefined {
    return this.control?.url;
  }

  get connectionsActive(): number {
    return this.listeners.connections;
  }

  get requestsTotal(): number {
    return this.handler.requestsTotal;
  }

  get errorLog(): ErrorLog {
    return this.current.logs.error;
  }

  /**
   * Swaps in a new configuration. The Plan is compiled and new listeners are bound off to the
   * side; any failure leaves the running configuration untouched. Unchanged listeners keep their
   * connections; removed ones drain gracefully; an address whose protocol changes stays bound
   * while its old connections drain. Requests in flight finish with the Plan they began.
   */
  reload(config: Config): Promise<void> {
    return this.serialized(() => this.apply(config));
  }

  /** Runs reloads one at a time, in the order asked; stop() waits for the one under way. */
  private serialized<T>(task: () => Promise<T>): Promise<T> {
    const result = this.reloading.then(task);
    this.reloading = result.catch(() => undefined);
    return result;
  }

  private async apply(config: Config): Promise<void> {
    const prepared = await this.prepare(config);
    await prepared.commit();
  }

  /**
   * Reloads `config` once `agree` says so, after everything that can fail has been made ready off
   * to the side (a worker process waits for its primary, which waits for every worker).
   */
  reloadWhenAgreed(config: Config, agree: () => Promise<boolean>): Promise<boolean> {
    return this.serialized(async () => {
      const prepared = await this.prepare(config);
      if (!(await agree())) {
        await prepared.discard();
        return false;
      }
      await prepared.commit();
      return true;
    });
  }

  /** The Plan compiled and ready, new listeners bound, changed logs opened; nothing swapped yet. */
  private async prepare(config: Config): Promise<PreparedReload> {
    if (this.stopping)
      throw new Error('the server is shutting down; the configuration is not reloaded');
    const plan = compilePlan(config, this.services);
    let changes: ListenerReload | undefined;
    try {
      // New application processes serve before the old ones are retired with their Plan.
      await plan.ready();
      await this.finished.prepare(plan.global.admin);
      changes = await this.listeners.prepare(plan);
      const logs = await reopenChanged(
        this.current.logs,
        config,
        this.services.resources,
        this.services.options.stderr,
      );
      const listenerChanges = changes;
      return {
        commit: () => this.swapIn(plan, config, listenerChanges, logs),
        discard: async () => {
          await listenerChanges.discard();
          await closeReplaced(this.current.logs, logs);
          await plan.leases.release();
        },
      };
    } catch (e) {
      // Nothing uses the new Plan: what only it leased closes now.
      await changes?.discard();
      await plan.leases.release();
      throw e;
    }
  }

  private async swapIn(
    plan: Plan,
    config: Config,
    changes: ListenerReload,
    logs: Logs,
  ): Promise<void> {
    const oldLogs = this.current.logs;
    applyEnvironment(config);
    this.current.logs = logs;
    this.finished.follow(plan);
    const old = this.handler.plan;
    this.handler.plan = plan;
    this.retirePlan(old);
    // Draining can take up to the grace period: it runs in the background, not in this reload.
    changes.commit(plan.global.shutdownTimeout, (draining) => this.retire(draining));
    this.listeners.update(plan);
    this.keepTlsUp(plan);
    this.reloads++;
    this.lastReload = new Date();
    // The admin listener restarts on every reload (SPEC-admin-api.md), but only after this
    // reload's own answer has left through it: closing it first would wait on itself.
    const control = this.control;
    if (control) setImmediate(() => control.reloaded(plan.global));
    await closeReplaced(logs, oldLogs);
  }

  /** A replaced Plan returns its leases once its requests have ended (at the latest, at stop). */
  private retirePlan(plan: Plan): void {
    this.retiredPlans.add(plan);
    void plan.inFlight.idle().then(async () => {
      await plan.leases.release();
      this.retiredPlans.delete(plan);
    });
  }

  private retire(draining: Promise<unknown>): void {
    this.retiring.add(draining);
    void draining.finally(() => this.retiring.delete(draining));
  }

  /**
   * Reloads from the configured source; never throws: the outcome says what happened, and the
   * error log says it too, in the same lines whatever asked (`by`: SIGHUP, the admin API).
   */
  reloadFromSource(by?: string): Promise<ReloadOutcome> {
    return reloadFromSource({
      source: this.services.options.reloadSource,
      stopping: () => this.stopping !== undefined,
      serialized: (task) => this.serialized(task),
      apply: async (config) => {
        try {
          await this.apply(config);
          return { ok: true, reloads: this.reloads };
        } catch (e) {
          return reloadFailure(e);
        }
      },
      log: (line) => this.errorLog.log(line),
      listenerUrls: () => this.listenerUrls,
      by,
    }).then((outcome) => {
      this.finished.reloaded(outcome.ok);
      return outcome;
    });
  }

  // ── what the admin API reads ─────────────────────────────────────────────────────────────
  status(): Record<string, unknown> {
    const modules = this.plan.moduleStatus();
    return {
      ...statusFields({
        startedAt: this.startedAt,
        connections: this.connectionsActive,
        requests: this.requestsTotal,
        reloads: this.reloads,
        lastReload: this.lastReload,
        listeners: this.listenerUrls,
      }),
      // Additions to CONTRACT.md's fields, present only when there is something to report.
      ...(Object.keys(modules).length > 0 ? { modules } : {}),
      ...(this.plan.acme ? { certificates: this.plan.acme.manager.status() } : {}),
    };
  }

  config(): unknown {
    return effectiveConfig(this.plan.config);
  }

  log(message: string): void {
    this.errorLog.log(message);
  }

  /** Reopens every log file, every host's (SIGUSR1, after logrotate renamed them). */
  async reopenLogs(): Promise<void> {
    await Promise.all(heldLogFiles(this.services.resources).map((file) => file.reopen()));
  }

  /** Graceful stop: no new connections, in-flight requests get `shutdownTimeout` ms. Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.draining = true;
      // A reload under way finishes first, so every listener it opens is closed here.
      await this.reloading;
      const grace = this.plan.global.shutdownTimeout;
      const [closed] = await Promise.all([this.listeners.close(grace), Promise.all(this.retiring)]);
      if (closed > 0)
        this.errorLog.log(
          `shutdownTimeout (${grace} ms) passed: ${closed} connection${closed === 1 ? '' : 's'} with requests in flight closed`,
        );
      // The admin listener goes last, so /health can say "shutting_down" while requests drain.
      await this.control?.close();
      this.handler.close();
      this.surgeGc.stop();
      // Whatever is still in flight was cut by the drain deadline: every lease goes now.
      await Promise.all([this.plan, ...this.retiredPlans].map((plan) => plan.leases.release()));
      this.errorLog.log('Portico stopped');
      await closeLogs(this.current.logs);
    })();
    return this.stopping;
  }

  /** This process's metrics, once the admin block has turned them on. */
  metricsRegistry(): Registry | undefined {
    return this.finished.registry;
  }

  /** `/metrics`: this process's, as Prometheus text. */
  async metrics(): Promise<string> {
    return (await this.finished.registry?.metrics()) ?? '';
  }

  private async openListeners(plan: Plan): Promise<void> {
    await this.listeners.open(plan);
    this.keepTlsUp(plan);
  }

  private keepTlsUp(plan: Plan): void {
    prefetchOcsp(plan);
    // A worker's primary says where certificates are kept.
    const announce = this.services.options.acmeFollows
      ? undefined
      : (line: string) => this.log(line);
    manageCertificates(plan, this.announced, announce);
  }
}

/** A reload ready to swap in, or to be thrown away leaving the server as it was. */
interface PreparedReload {
  commit(): Promise<void>;
  discard(): Promise<void>;
}

interface Services extends CompileServices {
  readonly options: ServerOptions;
}

/** CONTRACT.md: `environmentVariables` go into Portico's own environment (CGI, Python apps see them). */
function applyEnvironment(config: Config): void {
  for (const [name, value] of Object.entries(config.global.environmentVariables ?? {}))
    process.env[name] = value;
}
