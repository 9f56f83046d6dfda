// What a Server is started with, and the control plane (the admin API) it may run beside its
// listeners.
import type { AuthOptions } from '../auth/auth-services.js';
import type { ResolvedSettings } from '../config/defaults.js';
import type { LoadResult } from '../config/load.js';
import type { HostProcesses, Module } from '../plan/module.js';
import type { SharedStore } from '../store/shared-store.js';
import type { ConnectionLimits } from './protocol-server.js';
import type { ReloadOutcome } from './reload-from-source.js';

/** What a control plane sees of the server it runs beside. */
export interface ControlledServer {
  /** True from the start of a graceful stop. */
  readonly draining: boolean;
  status(): Record<string, unknown> | Promise<Record<string, unknown>>;
  config(): unknown;
  reloadFromSource(by?: string): Promise<ReloadOutcome>;
  /** Prometheus text exposition. */
  metrics(): Promise<string>;
  log(message: string): void;
}

/** What runs beside the listeners and follows the configuration: the admin API (admin/admin-api.ts). */
export interface ControlPlane {
  start(global: ResolvedSettings): Promise<void>;
  /** After each reload, once the reload's own answer has left. */
  reloaded(global: ResolvedSettings): void;
  /** Last at stop, after the listeners have drained. */
  close(): Promise<void>;
  /** Where it listens, while it does. */
  readonly url: string | undefined;
}

export interface ServerOptions {
  /** Where the error log goes when `errorLogFilePath` is not set. */
  readonly stderr?: NodeJS.WritableStream;
  /** Connection time limits, in place of the configuration's (tests). */
  readonly limits?: ConnectionLimits;
  /** Where a reload reads the configuration from (SIGHUP, the admin API's /reload). */
  readonly reloadSource?: () => Promise<LoadResult>;
  /** Basic-authentication state options (tests shorten the lock-out window). */
  readonly auth?: AuthOptions;
  /** The modules `loadModules` may name (default: modules/registry.ts). */
  readonly modules?: readonly Module[];
  /** State shared with the server's other processes (default: this process's memory). */
  readonly store?: SharedStore;
  /** Worker processes serving together, this one among them (default 1: the server is one). */
  readonly workerProcesses?: number;
  /** Processes this worker's primary runs for all workers (plan/module.ts's ModuleServices). */
  readonly hostProcesses?: HostProcesses;
  /** What this process is called in its metrics' `process` label (default: server). */
  readonly processName?: string;
  /** Certificates are ordered by the primary of this worker, which publishes them here. */
  readonly acmeFollows?: boolean;
  /**
   * OCSP responses are fetched by the primary of this worker, told here of each certificate a
   * handshake first shows; it publishes them to `plan.ocsp.staple`.
   */
  readonly ocspFetcher?: (certificate: Buffer, issuer: Buffer | null) => void;
  /** The admin API, made for this server (cli/run.ts passes admin/admin-api.ts). */
  readonly controlPlane?: (server: ControlledServer) => ControlPlane;
}
