// The running server: logs, the compiled Plan, the listeners, and the file cache they share.
// Starting compiles and binds everything or nothing; stopping drains in-flight requests within
// `shutdownTimeout`, then closes every handle it owns.
import type { AdminControl, ReloadOutcome } from '../admin/admin-server.js';
import { createAuthServices, type AuthOptions } from '../auth/auth-services.js';
import { AdminServer } from '../admin/admin-server.js';
import { RuntimeStats } from '../admin/runtime-stats.js';
import { isLoopback } from '../config/checks.js';
import type { ResolvedSettings } from '../config/defaults.js';
import { formatDiagnostic } from '../config/diagnostics.js';
import { effectiveConfig } from '../config/effective.js';
import { parseListen } from '../config/formats.js';
import type { LoadResult } from '../config/load.js';
import type { Config } from '../config/validate.js';
import { VERSION } from '../version.js';
import { AccessLog } from '../log/access-log.js';
import { ErrorLog } from '../log/error-log.js';
import { MODULE_FACTORIES } from '../modules/registry.js';
import { compilePlan, type CompileServices, type ListenerSpec, type Plan } from '../plan/compile.js';
import { OcspStapler } from '../tls/ocsp.js';
import { StaticFiles } from '../static/static-files.js';
import { ErrorResponder, type Logger } from './error-responder.js';
import { bindingOf, Listener, ProtocolServer, type ConnectionLimits, type Dispatch } from './listener.js';
import { RequestHandler, type AccessRecord } from './request-handler.js';

export interface ServerOptions {
  /** Where the error log goes when `errorLogFilePath` is not set. */
  readonly stderr?: NodeJS.WritableStream;
  /** Connection time limits (defaults: DEFAULT_LIMITS). */
  readonly limits?: ConnectionLimits;
  /** Where a reload reads the configuration from (SIGHUP, the admin API's /reload). */
  readonly reloadSource?: () => Promise<LoadResult>;
  /** Basic-authentication state options (tests shorten the lock-out window). */
  readonly auth?: AuthOptions;
}

// How long the admin listener waits for its own requests when it closes.
const ADMIN_GRACE_MS = 2_000;

export class Server implements AdminControl {
  readonly startedAt = new Date();
  reloads = 0;
  lastReload: Date | undefined;
  /** True from the start of a graceful stop: /health answers 503. */
  draining = false;
  private readonly listeners = new Map<string, Listener>();
  private readonly handler: RequestHandler;
  private readonly dispatch: Dispatch;
  private stopping: Promise<void> | undefined;
  private admin: AdminServer | undefined;
  private runtimeStats: RuntimeStats | undefined;
  /** Reloads run one at a time, in the order asked. */
  private reloading: Promise<unknown> = Promise.resolve();
  /** Admin listener restarts, one at a time: two overlapping ones would fight over the port. */
  private adminRestarts: Promise<void> = Promise.resolve();
  /** A reload removed the admin block: the admin API stays stopped (SPEC-admin-api.md). */
  private adminRemoved = false;
  private adminConfigured = false;
  /** Listeners and protocol servers a reload retired, draining in the background. */
  private readonly retiring = new Set<Promise<void>>();

  private constructor(
    plan: Plan,
    private readonly services: Services,
    /** Shared with `services.errorLog`, so every writer follows a reload that changes the file. */
    private readonly current: { logs: Logs },
  ) {
    this.handler = new RequestHandler(plan, new ErrorResponder(services.errorLog));
    this.listenForAccessLog();
    this.dispatch = this.handler.handle.bind(this.handler);
  }

  static async start(config: Config, options: ServerOptions = {}): Promise<Server> {
    const current = { logs: await openLogs(config, options) };
    const files = new StaticFiles();
    const errorLog: Logger = { log: (message) => current.logs.error.log(message) };
    const auth = createAuthServices(errorLog, options.auth);
    const ocsp = new OcspStapler({ log: (message) => errorLog.log(message) });
    const services: Services = { files, errorLog, auth, ocsp, modules: MODULE_FACTORIES, options };
    try {
      applyEnvironment(config);
      const server = new Server(compilePlan(config, services), services, current);
      await server.openListeners(server.plan);
      try {
        await server.startAdmin(server.plan.global.admin);
      } catch (e) {
        await Promise.all([...server.listeners.values()].map((l) => l.close(0)));
        throw e;
      }
      return server;
    } catch (e) {
      files.close();
      auth.close();
      ocsp.close();
      await closeLogs(current.logs);
      throw e;
    }
  }

  get plan(): Plan {
    return this.handler.plan;
  }

  /** Listener ids (`http://*:8080`) with the port actually bound. */
  get listenerUrls(): string[] {
    return [...this.listeners.values()].map((l) => l.spec.id.replace(/:\d+$/, `:${l.port}`));
  }

  get connectionsActive(): number {
    let n = 0;
    for (const l of this.listeners.values()) n += l.connections;
    return n;
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
    if (this.stopping) throw new Error('the server is shutting down; the configuration is not reloaded');
    const plan = compilePlan(config, this.services);
    const wanted = new Map(plan.listeners.map((s) => [bindingOf(s), s]));
    const added = plan.listeners.filter((s) => !this.listeners.has(bindingOf(s)));
    const removed = [...this.listeners].filter(([binding]) => !wanted.has(binding)).map(([, l]) => l);
    // An address whose protocol changes (HTTP/2 or client certificates switched, HTTP to HTTPS)
    // keeps its socket and gets a new protocol server. Made before anything changes: it can fail.
    const replaced: [Listener, ProtocolServer][] = [];
    const discard = () => Promise.all(replaced.map(([, p]) => p.drain(0)));
    try {
      for (const [binding, l] of this.listeners) {
        const spec = wanted.get(binding);
        if (spec && spec.key !== l.spec.key) replaced.push([l, this.protocolServer(spec, plan)]);
      }
    } catch (e) {
      await discard();
      throw e;
    }
    let opened: Listener[];
    let logs: Logs;
    try {
      opened = await this.bind(added, plan);
      try {
        logs = await reopenChanged(this.current.logs, config, this.services.options);
      } catch (e) {
        await Promise.all(opened.map((l) => l.close(0)));
        throw e;
      }
    } catch (e) {
      await discard();
      throw e;
    }
    const oldLogs = this.current.logs;
    applyEnvironment(config);
    this.current.logs = logs;
    this.listenForAccessLog();
    this.handler.plan = plan;
    for (const l of opened) this.listeners.set(bindingOf(l.spec), l);
    for (const l of removed) this.listeners.delete(bindingOf(l.spec));
    const grace = plan.global.shutdownTimeout;
    // Draining can take up to the grace period: it runs in the background, not in this reload.
    for (const l of removed) this.retire(l.close(grace));
    for (const [l, protocol] of replaced) this.retire(l.replace(protocol, grace));
    if (plan.tls) for (const l of this.listeners.values()) l.updateTls(plan.tls);
    this.prefetchOcsp(plan);
    this.reloads++;
    this.lastReload = new Date();
    // The admin listener restarts on every reload (SPEC-admin-api.md), but only after this
    // reload's own answer has left through it: closing it first would wait on itself.
    setImmediate(() => {
      this.adminRestarts = this.adminRestarts
        .then(() => this.restartAdmin(plan.global.admin))
        .catch((e: unknown) => this.log(`admin API not restarted after reload: ${(e as Error).message}`));
    });
    await Promise.all([
      oldLogs.error !== logs.error ? oldLogs.error.close() : undefined,
      oldLogs.access !== logs.access ? oldLogs.access?.close() : undefined,
    ]);
  }

  private retire(draining: Promise<void>): void {
    this.retiring.add(draining);
    void draining.finally(() => this.retiring.delete(draining));
  }

  /** Reloads from the configured source; never throws: the outcome says what happened. */
  reloadFromSource(): Promise<ReloadOutcome> {
    const source = this.services.options.reloadSource;
    const run = async (): Promise<ReloadOutcome> => {
      if (this.stopping) return { ok: false, status: 503, error: 'shutting down', details: ['the server is shutting down; the configuration is not reloaded'] };
      if (!source) return { ok: false, status: 500, error: 'reload failed', details: ['this server has no configuration file to reload from'] };
      const next = await source();
      if (!next.config) {
        const details = next.diagnostics.filter((d) => d.severity === 'error').map(formatDiagnostic);
        return { ok: false, status: 422, error: 'invalid configuration', details };
      }
      try {
        await this.apply(next.config);
        return { ok: true, reloads: this.reloads };
      } catch (e) {
        return { ok: false, status: 500, error: 'reload failed', details: [(e as Error).message] };
      }
    };
    return this.serialized(run);
  }

  // ── what the admin API reads (AdminControl) ──────────────────────────────────────────────
  status(): Record<string, unknown> {
    return {
      status: 'ok',
      version: VERSION,
      uptime_sec: Math.floor((Date.now() - this.startedAt.getTime()) / 1000),
      started_at: this.startedAt.toISOString(),
      connections_active: this.connectionsActive,
      requests_total: this.requestsTotal,
      reloads: this.reloads,
      last_reload: this.lastReload?.toISOString() ?? null,
      listeners: this.listenerUrls,
    };
  }

  config(): unknown {
    return effectiveConfig(this.plan.config);
  }

  runtime(): Record<string, unknown> {
    return (this.runtimeStats ??= new RuntimeStats()).read();
  }

  log(message: string): void {
    this.errorLog.log(message);
  }

  /** Reopens both logs (SIGUSR1, after logrotate renamed them). */
  async reopenLogs(): Promise<void> {
    await Promise.all([this.current.logs.error.reopen(), this.current.logs.access?.reopen()]);
  }

  /** Graceful stop: no new connections, in-flight requests get `shutdownTimeout` ms. Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.draining = true;
      // A reload under way finishes first, so every listener it opens is closed here.
      await this.reloading;
      const grace = this.plan.global.shutdownTimeout;
      await Promise.all([...[...this.listeners.values()].map((l) => l.close(grace)), ...this.retiring]);
      this.listeners.clear();
      // The admin listener goes last, so /health can say "shutting_down" while requests drain.
      await this.adminRestarts;
      await this.admin?.close(ADMIN_GRACE_MS);
      this.admin = undefined;
      this.runtimeStats?.close();
      this.handler.close();
      this.services.files.close();
      this.services.auth.close();
      this.services.ocsp.close();
      await closeLogs(this.current.logs);
    })();
    return this.stopping;
  }

  private async startAdmin(settings: ResolvedSettings['admin']): Promise<void> {
    this.adminConfigured = settings !== undefined;
    if (settings === undefined) return;
    const admin = new AdminServer(settings, this);
    await admin.start();
    this.adminStarted(admin);
  }

  private adminStarted(admin: AdminServer): void {
    this.admin = admin;
    // Sampling starts with the listener, so the first /runtime covers a real interval.
    if (admin.settings.runtime) this.runtimeStats ??= new RuntimeStats();
    const host = parseListen(admin.listen)?.host;
    if (host !== undefined && !isLoopback(host)) {
      this.log(`WARNING: the admin API listens on ${admin.listen}, which is not a loopback address: anyone who can reach it can reconfigure this server`);
    }
  }

  /**
   * Every reload: the old admin API finishes its requests and closes, the new one starts. When
   * the address stays the same, the new one takes over the bound socket, so nothing is refused.
   * A reload without an `admin` block stops it for the life of the process (SPEC-admin-api.md:
   * "stopped permanently"), so a file edited by mistake cannot bring a control plane back.
   */
  private async restartAdmin(settings: ResolvedSettings['admin']): Promise<void> {
    if (this.stopping) return;
    const previous = this.admin;
    this.admin = undefined;
    const hadAdmin = this.adminConfigured;
    this.adminConfigured = settings !== undefined;
    if (settings === undefined && hadAdmin && !this.adminRemoved) {
      this.adminRemoved = true;
      this.log('admin API stopped: the configuration no longer has an admin block; it stays stopped until Portico restarts');
    } else if (settings !== undefined && this.adminRemoved) {
      this.log('admin API not started: an earlier reload removed it, and it stays stopped until Portico restarts');
    }
    if (settings === undefined || this.adminRemoved) {
      await previous?.close(ADMIN_GRACE_MS);
      this.runtimeStats?.close();
      this.runtimeStats = undefined;
      return;
    }
    const next = new AdminServer(settings, this);
    if (previous && next.takeOver(previous, ADMIN_GRACE_MS)) return this.adminStarted(next);
    await previous?.close(ADMIN_GRACE_MS);
    if (this.stopping) return next.discard();
    try {
      await next.start();
      this.adminStarted(next);
    } catch (e) {
      this.log(`admin API not restarted after reload: ${(e as Error).message}`);
    }
  }

  /** Staples are fetched ahead of the first handshake, in the background. */
  private prefetchOcsp(plan: Plan): void {
    if (plan.tls?.onOcspRequest) for (const chain of plan.tls.certificates.chains) this.services.ocsp.prefetch(chain);
  }

  /** Access lines only cost a listener per request when an access log is configured. */
  private listenForAccessLog(): void {
    const access = this.current.logs.access;
    this.handler.onDone = access ? (record) => access.log(accessEntry(record)) : undefined;
  }

  private async openListeners(plan: Plan): Promise<void> {
    for (const l of await this.bind(plan.listeners, plan)) this.listeners.set(bindingOf(l.spec), l);
    this.prefetchOcsp(plan);
    if (plan.global.enableHTTP3) this.log('HTTP/3 is not served: this Node.js runtime has no QUIC support (enableHTTP3 is ignored; HTTPS and HTTP/2 are served)');
  }

  private protocolServer(spec: ListenerSpec, plan: Plan): ProtocolServer {
    return new ProtocolServer(spec, this.dispatch, this.services.options.limits, plan.tls);
  }

  /** Binds every spec or none. */
  private async bind(specs: readonly ListenerSpec[], plan: Plan): Promise<Listener[]> {
    const opened: Listener[] = [];
    try {
      for (const spec of specs) {
        const listener = new Listener(this.protocolServer(spec, plan), { log: (message) => this.log(message) });
        await listener.start();
        opened.push(listener);
      }
      return opened;
    } catch (e) {
      await Promise.all(opened.map((l) => l.close(0)));
      throw e;
    }
  }
}

interface Logs {
  readonly error: ErrorLog;
  readonly access: AccessLog | undefined;
  readonly errorPath: string | undefined;
  readonly accessPath: string | undefined;
}

interface Services extends CompileServices {
  readonly files: StaticFiles;
  readonly options: ServerOptions;
}

async function openLogs(config: Config, options: ServerOptions): Promise<Logs> {
  const errorPath = config.global.errorLogFilePath;
  const accessPath = config.global.logFilePath;
  const error = await ErrorLog.open(errorPath, options.stderr);
  try {
    return { error, access: await AccessLog.open(accessPath), errorPath, accessPath };
  } catch (e) {
    await error.close();
    throw e;
  }
}

/** New log files only where the configured path changed; the others carry over. */
async function reopenChanged(old: Logs, config: Config, options: ServerOptions): Promise<Logs> {
  const errorPath = config.global.errorLogFilePath;
  const accessPath = config.global.logFilePath;
  const error = errorPath === old.errorPath ? old.error : await ErrorLog.open(errorPath, options.stderr);
  try {
    const access = accessPath === old.accessPath ? old.access : await AccessLog.open(accessPath);
    return { error, access, errorPath, accessPath };
  } catch (e) {
    if (error !== old.error) await error.close();
    throw e;
  }
}

async function closeLogs(logs: Logs): Promise<void> {
  await logs.access?.close();
  await logs.error.close();
}


/** CONTRACT.md: `environmentVariables` go into Portico's own environment (CGI, Python apps see them). */
function applyEnvironment(config: Config): void {
  for (const [name, value] of Object.entries(config.global.environmentVariables ?? {})) process.env[name] = value;
}

function accessEntry({ ctx, rawTarget, protocol }: AccessRecord) {
  const h = ctx.req.headers;
  return {
    clientIp: ctx.clientAddress,
    user: ctx.user,
    time: new Date(ctx.startedAt),
    method: ctx.method,
    target: rawTarget,
    protocol,
    // A response the client abandoned before its head was sent: nginx's 499.
    status: ctx.status || 499,
    length: ctx.length,
    referer: typeof h.referer === 'string' ? h.referer : undefined,
    userAgent: typeof h['user-agent'] === 'string' ? h['user-agent'] : undefined,
  };
}
