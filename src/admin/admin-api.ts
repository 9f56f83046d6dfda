// The admin API across the server's life: started with the server, restarted on every reload
// (SPEC-admin-api.md) once that reload's own answer has left, stopped last at shutdown so /health
// can say "shutting_down" while requests drain. A reload that keeps the address hands the bound
// socket to the new configuration's API; a reload without an `admin` block stops it for the life
// of the process ("stopped permanently"), so a file edited by mistake cannot bring a control plane back.
import type { ResolvedSettings } from '../config/defaults.js';
import { isLoopback, parseListen } from '../config/formats.js';
import type { ControlPlane, ControlledServer } from '../server/server-options.js';
import { AdminServer, type AdminControl } from './admin-server.js';
import { RuntimeStats } from './runtime-stats.js';

type AdminSettings = ResolvedSettings['admin'];

// How long an admin listener waits for its own requests when it closes.
const GRACE_MS = 2_000;

/** What the admin API reports on and reloads: the Server, or the primary over its workers. */
export interface AdminSubject extends ControlledServer {
  /** This process's /runtime, given; the subject's own when it has more processes to report. */
  runtime?(own: Record<string, unknown>): Promise<Record<string, unknown>>;
}

export class AdminApi implements ControlPlane {
  private admin: AdminServer | undefined;
  private runtimeStats: RuntimeStats | undefined;
  /** Restarts, one at a time: two overlapping ones would fight over the port. */
  private restarts: Promise<void> = Promise.resolve();
  private configured = false;
  private removed = false;
  private closed = false;
  private readonly control: AdminControl;

  constructor(private readonly server: AdminSubject) {
    this.control = {
      get draining() {
        return server.draining;
      },
      status: () => server.status(),
      config: () => server.config(),
      reloadFromSource: () => server.reloadFromSource('the admin API'),
      runtime: () => {
        const own = (this.runtimeStats ??= new RuntimeStats()).read();
        return server.runtime ? server.runtime(own) : own;
      },
      metrics: () => server.metrics(),
      log: (message) => server.log(message),
    };
  }

  get url(): string | undefined {
    return this.admin?.url;
  }

  async start(global: ResolvedSettings): Promise<void> {
    const settings = global.admin;
    this.configured = settings !== undefined;
    if (settings === undefined) return;
    const admin = new AdminServer(settings, this.control);
    await admin.start();
    this.started(admin);
  }

  reloaded(global: ResolvedSettings): void {
    this.restarts = this.restarts
      .then(() => this.restart(global.admin))
      .catch((e: unknown) =>
        this.server.log(`admin API not restarted after reload: ${(e as Error).message}`),
      );
  }

  /** After the server's listeners: waits for a restart under way, then closes. */
  async close(): Promise<void> {
    this.closed = true;
    await this.restarts;
    await this.admin?.close(GRACE_MS);
    this.admin = undefined;
    this.runtimeStats?.close();
    this.runtimeStats = undefined;
  }

  private started(admin: AdminServer): void {
    this.admin = admin;
    // Sampling starts with the listener, so the first /runtime covers a real interval.
    if (admin.settings.runtime) this.runtimeStats ??= new RuntimeStats();
    const host = parseListen(admin.listen)?.host;
    if (host !== undefined && !isLoopback(host)) {
      this.server.log(
        `WARNING: the admin API listens on ${admin.listen}, which is not a loopback address: anyone who can reach it can reconfigure this server`,
      );
    }
  }

  private async restart(settings: AdminSettings): Promise<void> {
    if (this.closed) return;
    const previous = this.admin;
    this.admin = undefined;
    const had = this.configured;
    this.configured = settings !== undefined;
    if (settings === undefined && had && !this.removed) {
      this.removed = true;
      this.server.log(
        'admin API stopped: the configuration no longer has an admin block; it stays stopped until Portico restarts',
      );
    } else if (settings !== undefined && this.removed) {
      this.server.log(
        'admin API not started: an earlier reload removed it, and it stays stopped until Portico restarts',
      );
    }
    if (settings === undefined || this.removed) {
      await previous?.close(GRACE_MS);
      this.runtimeStats?.close();
      this.runtimeStats = undefined;
      return;
    }
    const next = new AdminServer(settings, this.control);
    if (previous && next.takeOver(previous, GRACE_MS)) return this.started(next);
    await previous?.close(GRACE_MS);
    if (this.closed) return next.discard();
    try {
      await next.start();
      this.started(next);
    } catch (e) {
      this.server.log(`admin API not restarted after reload: ${(e as Error).message}`);
    }
  }
}
