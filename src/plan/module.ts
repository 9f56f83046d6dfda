// The module contract (ARCHITECTURE.md, "Modules"), after Caddy's Validate / Provision / ServeHTTP /
// Cleanup. A module is a folder under src/modules/ and one line in modules/registry.ts: it brings
// its name and its property rows, which the registry adds to the build's property table.
import type { ConfigCheck } from '../config/checks.js';
import type { ResolvedOf, ResolvedSettings } from '../config/defaults.js';
import type { PropertyRows, Settings, SettingsOf } from '../config/properties.js';
import type { Logger } from '../http/logger.js';
import type { Stage } from '../http/stage.js';
import type { SharedStore } from '../store/shared-store.js';
import type { Leases } from './resources.js';

/** What provisioning may use besides leases. */
export interface ModuleServices {
  readonly errorLog: Logger;
  /** State shared with the server's other processes (store/shared-store.ts). */
  readonly store: SharedStore;
  /**
   * Worker processes serving together, this one among them (1 without workers): what is sized for
   * the whole server (connections to an application, its processes) is divided among them.
   */
  readonly workerProcesses: number;
  /**
   * With workers: processes the primary runs once for all of them, started for the Plan being
   * compiled; resolves with the Unix sockets they listen on (rejects when they could not start).
   */
  readonly hostProcesses?: HostProcesses;
}

/** What hosted processes run (the module's own plain data), `key` naming it, and how many. */
export interface HostRequest {
  readonly key: string;
  readonly spec: object;
  readonly processes: number;
}

export type HostProcesses = (request: HostRequest) => Promise<readonly string[]>;

/** A provisioned module: its stage, and what the admin API's /status shows of it. */
export interface Provisioned {
  readonly stage: Stage;
  status?(): unknown;
  /**
   * What the stage needs started before it serves (a Python application's processes): the Plan
   * goes live only once it resolves, and a rejection is a start error or a refused reload.
   */
  ready?(): Promise<void>;
}

/** What a module's options read: the core settings and its own, defaults filled in. */
export type ModuleSettings<Rows extends PropertyRows> = ResolvedSettings & ResolvedOf<Rows>;

/** A module's check, which reads its own properties in the scopes' settings. */
export type ModuleCheck<Rows extends PropertyRows> = ConfigCheck<Settings & SettingsOf<Rows>>;

export interface Module<Options = unknown, Rows extends PropertyRows = PropertyRows> {
  /** What `loadModules` names it by. */
  readonly name: string;
  /**
   * Its rows of the property table (config/properties.ts explains the columns); a row several
   * modules share is the same object in each one's rows.
   */
  readonly properties: Rows;
  /** Load time, no I/O: what the property types cannot express, each problem with its position. */
  readonly check?: ModuleCheck<Rows>;
  /**
   * Compile time, pure: what one Resolved asks of the module, as plain JSON-able data (it is the
   * memo key); undefined means the module is inactive there.
   */
  options(settings: ModuleSettings<Rows>): Options | undefined;
  /**
   * Compile time, once per distinct options in a Plan (fifty locations with one `proxyTo` share one
   * stage). Shared resources come only through `leases`, which the Plan returns when a reload
   * retires it (after its requests end) and at stop.
   */
  provision(options: Options, leases: Leases, services: ModuleServices): Provisioned;
}

/**
 * A module's options, provision and rows typed together, for the registry's list: the settings
 * it is given hold every property of the table, its own among them.
 */
export function defineModule<Options, const Rows extends PropertyRows>(
  module: Module<Options, Rows>,
): Module {
  return module as unknown as Module;
}
