// `validate --apps`: the applications a configuration runs are started as `run` starts them (every
// Python application imported, its processes ready), then stopped, without listening on anything.
// Nothing else is started: certificates are only read, no ACME order is placed, no OCSP fetched.
import type { Config } from '../config/validate.js';
import { MODULES } from '../modules/registry.js';
import { compilePlan, type Plan } from '../plan/compile.js';
import { Resources } from '../plan/resources.js';
import { MemoryStore } from '../store/memory-store.js';
import type { CommandIo } from './io.js';

/** Undefined when every application started; otherwise why one did not. */
export async function startApplications(
  config: Config,
  io: CommandIo,
): Promise<string | undefined> {
  let plan: Plan;
  try {
    plan = compilePlan(config, {
      resources: new Resources(),
      modules: MODULES,
      errorLog: { log: (message) => io.stderr.write(`${message}\n`) },
      store: new MemoryStore(),
      workerProcesses: 1,
      acmeFollows: true,
      ocspFetcher: () => undefined,
    });
  } catch (e) {
    return (e as Error).message;
  }
  try {
    await plan.ready();
    return undefined;
  } catch (e) {
    return (e as Error).message;
  } finally {
    await plan.leases.release();
  }
}
