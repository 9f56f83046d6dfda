// The module contract (ARCHITECTURE.md, "Modules"), after Caddy's Validate / Provision / ServeHTTP /
// Cleanup. A module is a folder under src/modules/ and one line in modules/registry.ts; its
// properties are rows of the one table (config/properties.ts, with their `module` column).
import type { ConfigCheck } from '../config/checks.js';
import type { ResolvedSettings } from '../config/defaults.js';
import type { ModuleName } from '../config/properties.js';
import type { Logger } from '../http/logger.js';
import type { Stage } from '../http/stage.js';
import type { Leases } from './resources.js';

/** What provisioning may use besides leases. */
export interface ModuleServices {
  readonly errorLog: Logger;
}

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

export interface Module<Options = unknown> {
  readonly name: ModuleName;
  /** Load time, no I/O: what the property types cannot express, each problem with its position. */
  readonly check?: ConfigCheck;
  /**
   * Compile time, pure: what one Resolved asks of the module, as plain JSON-able data (it is the
   * memo key); undefined means the module is inactive there.
   */
  options(settings: ResolvedSettings): Options | undefined;
  /**
   * Compile time, once per distinct options in a Plan (fifty locations with one `proxyTo` share one
   * stage). Shared resources come only through `leases`, which the Plan returns when a reload
   * retires it (after its requests end) and at stop.
   */
  provision(options: Options, leases: Leases, services: ModuleServices): Provisioned;
}

/** A module's options and provision typed together, for the registry's list. */
export function defineModule<Options>(module: Module<Options>): Module {
  return module as Module;
}
