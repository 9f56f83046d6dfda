// Provisioning for one Plan: each module's options per Resolved, and one provisioned stage per
// distinct options (the memo), so fifty locations with equal options share one stage and its
// leases. The Plan keeps what was provisioned for the admin API's /status.
import type { ResolvedSettings } from '../config/defaults.js';
import type { Logger } from '../http/logger.js';
import type { Stage } from '../http/stage.js';
import type { Module, ModuleServices, Provisioned } from './module.js';
import type { Leases } from './resources.js';

export class Provisioner {
  private readonly byName: ReadonlyMap<string, Module>;
  private readonly memo = new Map<
    string,
    { readonly name: string; readonly provisioned: Provisioned }
  >();

  constructor(
    modules: readonly Module[],
    private readonly leases: Leases,
    private readonly services: ModuleServices,
  ) {
    this.byName = new Map(modules.map((m) => [m.name, m]));
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** How many stages were provisioned (distinct options, all modules). */
  get count(): number {
    return this.memo.size;
  }

  /**
   * The module's stage for one Resolved, or undefined where the module is inactive; it logs to
   * `errorLog`, its host's error log, which `errorLogFilePath` names.
   */
  stage(name: string, settings: ResolvedSettings, errorLog: Logger): Stage | undefined {
    const module = this.byName.get(name);
    const options = module?.options(settings);
    if (module === undefined || options === undefined) return undefined;
    const key = `${name}\n${settings.errorLogFilePath ?? ''}\n${JSON.stringify(options)}`;
    let entry = this.memo.get(key);
    if (entry === undefined) {
      const services =
        errorLog === this.services.errorLog ? this.services : { ...this.services, errorLog };
      entry = { name, provisioned: module.provision(options, this.leases, services) };
      this.memo.set(key, entry);
    }
    return entry.provisioned.stage;
  }

  /** Every provisioned stage ready to serve; the first failure rejects. */
  async ready(): Promise<void> {
    await Promise.all([...this.memo.values()].map(({ provisioned }) => provisioned.ready?.()));
  }

  /** module → the status of each provisioned stage that reports one. */
  status(): Record<string, unknown[]> {
    const out: Record<string, unknown[]> = {};
    for (const { name, provisioned } of this.memo.values())
      if (provisioned.status) (out[name] ??= []).push(provisioned.status());
    return out;
  }
}
