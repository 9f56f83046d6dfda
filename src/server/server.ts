// The running server: logs, the compiled Plan, the listeners, and the file cache they share.
// Starting compiles and binds everything or nothing; stopping drains in-flight requests within
// `shutdownTimeout`, then closes every handle it owns.
import type { Config } from '../config/validate.js';
import { AccessLog } from '../log/access-log.js';
import { ErrorLog } from '../log/error-log.js';
import { MODULE_FACTORIES } from '../modules/registry.js';
import { compilePlan, type ListenerSpec, type Plan } from '../plan/compile.js';
import { StaticFiles } from '../static/static-files.js';
import { ErrorResponder, type Logger } from './error-responder.js';
import { Listener, type ConnectionLimits, type Dispatch } from './listener.js';
import type { PipelineServices } from './pipeline.js';
import { RequestHandler, type AccessRecord } from './request-handler.js';

export interface ServerOptions {
  /** Where the error log goes when `errorLogFilePath` is not set. */
  readonly stderr?: NodeJS.WritableStream;
  /** Connection time limits (defaults: DEFAULT_LIMITS). */
  readonly limits?: ConnectionLimits;
}

export class Server {
  readonly startedAt = new Date();
  reloads = 0;
  lastReload: Date | undefined;
  private readonly listeners = new Map<string, Listener>();
  private readonly handler: RequestHandler;
  private readonly dispatch: Dispatch;
  private stopping: Promise<void> | undefined;

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
    const services: Services = { files, errorLog, modules: MODULE_FACTORIES, options };
    try {
      applyEnvironment(config);
      const server = new Server(compilePlan(config, services), services, current);
      await server.openListeners(server.plan.listeners);
      return server;
    } catch (e) {
      files.close();
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
   * connections; removed ones drain gracefully. Requests in flight finish with the Plan they began.
   */
  async reload(config: Config): Promise<void> {
    const plan = compilePlan(config, this.services);
    const wanted = new Set(plan.listeners.map((s) => s.id));
    const opened = await this.bind(plan.listeners.filter((s) => !this.listeners.has(s.id)));
    let logs: Logs;
    try {
      logs = await reopenChanged(this.current.logs, config, this.services.options);
    } catch (e) {
      await Promise.all(opened.map((l) => l.close(0)));
      throw e;
    }
    const oldLogs = this.current.logs;
    applyEnvironment(config);
    this.current.logs = logs;
    this.listenForAccessLog();
    this.handler.plan = plan;
    for (const l of opened) this.listeners.set(l.spec.id, l);
    const removed = [...this.listeners.values()].filter((l) => !wanted.has(l.spec.id));
    for (const l of removed) this.listeners.delete(l.spec.id);
    this.reloads++;
    this.lastReload = new Date();
    await Promise.all([
      ...removed.map((l) => l.close(plan.global.shutdownTimeout)),
      oldLogs.error !== logs.error ? oldLogs.error.close() : undefined,
      oldLogs.access !== logs.access ? oldLogs.access?.close() : undefined,
    ]);
  }

  /** Reopens both logs (SIGUSR1, after logrotate renamed them). */
  async reopenLogs(): Promise<void> {
    await Promise.all([this.current.logs.error.reopen(), this.current.logs.access?.reopen()]);
  }

  /** Graceful stop: no new connections, in-flight requests get `shutdownTimeout` ms. Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      const grace = this.plan.global.shutdownTimeout;
      await Promise.all([...this.listeners.values()].map((l) => l.close(grace)));
      this.listeners.clear();
      this.handler.close();
      this.services.files.close();
      await closeLogs(this.current.logs);
    })();
    return this.stopping;
  }

  /** Access lines only cost a listener per request when an access log is configured. */
  private listenForAccessLog(): void {
    const access = this.current.logs.access;
    this.handler.onDone = access ? (record) => access.log(accessEntry(record)) : undefined;
  }

  private async openListeners(specs: readonly ListenerSpec[]): Promise<void> {
    for (const l of await this.bind(specs)) this.listeners.set(l.spec.id, l);
  }

  /** Binds every spec or none. */
  private async bind(specs: readonly ListenerSpec[]): Promise<Listener[]> {
    const opened: Listener[] = [];
    try {
      for (const spec of specs) {
        const listener = new Listener(spec, this.dispatch, this.services.options.limits);
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

interface Services extends PipelineServices {
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
