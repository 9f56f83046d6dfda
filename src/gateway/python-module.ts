// The wsgi, wsgid and asgi modules differ only in their properties and how their processes run:
// this builds each of them. A Plan starts its own processes for each application (shared by the
// locations that mount it), so a reload runs the application's current code: the new processes
// serve before the old Plan, and with it the old processes, is retired (gunicorn's HUP).
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import type { ConfigCheck } from '../config/checks.js';
import type { ResolvedSettings } from '../config/defaults.js';
import type { ModuleName } from '../config/properties.js';
import { pathProblem } from '../config/system-errors.js';
import { defineModule, type Module } from '../plan/module.js';
import type { Leases } from '../plan/resources.js';
import { PythonPool } from '../process/python-pool.js';
import type { PythonMode } from '../process/python-worker.js';
import { pythonStage } from './python-stage.js';
import { gatewayLimits, type GatewayLimits } from './timeouts.js';

export interface PythonOptions {
  readonly executable: string;
  /** Absolute. */
  readonly application: string;
  readonly path: string;
  readonly clearImportPath: boolean;
  /** `environmentVariables`: given to the processes, which a reload starts before it sets them in Portico's own environment. */
  readonly environment: Readonly<Record<string, string>>;
  readonly limits: GatewayLimits;
}

/** What one module reads of a Resolved's settings. */
export interface PythonProperties {
  readonly application: string | undefined;
  readonly path: string;
  readonly clearImportPath: boolean;
}

/** Each Plan's own number, so its applications' processes are its own. */
const planNumbers = new WeakMap<Leases, number>();
let plans = 0;

function planNumber(leases: Leases): number {
  let n = planNumbers.get(leases);
  if (n === undefined) planNumbers.set(leases, (n = ++plans));
  return n;
}

/** An application file that is not there is a load error with its position, not a Python traceback. */
function checkApplicationFile(mode: ModuleName, property: string): ConfigCheck {
  return (config, scopes, diags, { files }) => {
    if (!files || !(config.global.loadModules ?? []).includes(mode)) return;
    for (const scope of scopes) {
      const entry = scope.keys.get(property);
      const file = scope.settings[property as keyof typeof scope.settings];
      if (entry === undefined || typeof file !== 'string') continue;
      const problem = pathProblem(file, 'file');
      if (problem !== undefined)
        diags.error(entry.value.pos, `${scope.path}.${property}`, `${file}: ${problem}`);
    }
  };
}

export function pythonModule(
  mode: PythonMode & ModuleName,
  read: (s: ResolvedSettings) => PythonProperties,
): Module {
  // wsgid: one process per CPU, as Ferron's pre-forked pool (REFERENCE-behaviour.md §18).
  const processes = mode === 'wsgid' ? availableParallelism() : 1;
  // wsgi: a thread pool as large as Python's own default (ThreadPoolExecutor).
  const threads = Math.min(32, availableParallelism() + 4);
  return defineModule<PythonOptions>({
    name: mode,
    check: checkApplicationFile(mode, `${mode}ApplicationPath`),
    options(s) {
      const p = read(s);
      if (p.application === undefined) return undefined;
      return {
        executable: s.pythonExecutable,
        application: resolve(p.application),
        path: p.path,
        clearImportPath: p.clearImportPath,
        environment: s.environmentVariables ?? {},
        limits: gatewayLimits(s),
      };
    },
    provision(o, leases, { errorLog }) {
      const spec = {
        mode,
        executable: o.executable,
        application: o.application,
        clearImportPath: o.clearImportPath,
        environment: o.environment,
        threads,
      };
      const key = `python:${planNumber(leases)}:${mode}:${o.executable}:${o.application}:${o.clearImportPath}`;
      const pool = leases.take(key, () => new PythonPool({ spec, processes, errorLog }));
      return {
        stage: pythonStage({
          mode,
          pool,
          path: o.path,
          application: o.application,
          limits: o.limits,
          errorLog,
        }),
        ready: () => pool.start(),
        status: () => ({ ...pool.status(), path: o.path }),
      };
    },
  });
}
