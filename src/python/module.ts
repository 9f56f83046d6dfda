// The wsgi, wsgid and asgi modules differ only in their properties and how their processes run:
// this builds each of them. A Plan starts its own processes for each application (shared by the
// locations that mount it), so a reload runs the application's current code: the new processes
// serve before the old Plan, and with it the old processes, is retired (gunicorn's HUP). With
// workers, the primary starts a wsgi or asgi application's one process for the same Plan of every
// worker, which connect to it; wsgid's processes stay each worker's own, as each takes one request
// at a time and a worker sees only its own requests when it chooses the least busy.
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import type { ConfigCheck } from '../config/checks.js';
import type { ScopeRecord } from '../config/validate.js';
import type { PropertyRows } from '../config/properties.js';
import { missingExecutable } from '../config/executables.js';
import { pathProblem } from '../config/system-errors.js';
import { gatewayLimits, type GatewayLimits } from '../gateway/timeouts.js';
import { defineModule, type Module, type ModuleSettings } from '../plan/module.js';
import { HostedPool } from './hosted-pool.js';
import { PythonPool } from './pool.js';
import { pythonStage } from './stage.js';
import type { PythonMode } from './worker.js';

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
  /** `pythonExecutable`. */
  readonly executable: string;
  readonly application: string | undefined;
  readonly path: string;
  readonly clearImportPath: boolean;
}

/**
 * An application file that is not there, or an interpreter that cannot run, is a load error with
 * its position, not a failure at start.
 */
function checkApplicationFile(mode: PythonMode, property: string): ConfigCheck {
  return (config, scopes, diags, { files }) => {
    if (!files || !(config.global.loadModules ?? []).includes(mode)) return;
    for (const scope of scopes) {
      const entry = scope.keys.get(property);
      const file = scope.settings[property as keyof typeof scope.settings];
      if (entry === undefined || typeof file !== 'string') continue;
      const problem = pathProblem(file, 'file');
      if (problem !== undefined)
        diags.error(entry.value.pos, `${scope.path}.${property}`, `${file}: ${problem}`);
      const setBy = inheritedFrom(scopes, scope, 'pythonExecutable');
      const missing = missingExecutable(
        (setBy?.settings as { pythonExecutable?: string } | undefined)?.pythonExecutable ??
          'python3',
      );
      if (missing !== undefined)
        diags.error(
          (setBy?.keys.get('pythonExecutable') ?? entry).value.pos,
          `${(setBy ?? scope).path}.pythonExecutable`,
          `${missing}; the ${mode} application of ${scope.path} cannot start`,
        );
    }
  };
}

/** The scope whose `name` applies to `scope`: its own, else its host's, else the global one. */
function inheritedFrom(
  scopes: readonly ScopeRecord[],
  scope: ScopeRecord,
  name: string,
): ScopeRecord | undefined {
  const host = /^hosts\[\d+\]/.exec(scope.path)?.[0];
  for (const path of [scope.path, host, 'global']) {
    const found = scopes.find((s) => s.path === path);
    if (found?.keys.has(name)) return found;
  }
  return undefined;
}

/** The module named `mode`, with its rows (`modeApplicationPath` among them) and how it reads them. */
export function pythonModule<const Rows extends PropertyRows>(
  mode: PythonMode,
  properties: Rows,
  read: (s: ModuleSettings<Rows>) => PythonProperties,
): Module {
  // wsgi: a thread pool as large as Python's own default (ThreadPoolExecutor).
  const threads = Math.min(32, availableParallelism() + 4);
  return defineModule<PythonOptions, Rows>({
    name: mode,
    properties,
    check: checkApplicationFile(mode, `${mode}ApplicationPath`),
    options(s) {
      const p = read(s);
      if (p.application === undefined) return undefined;
      return {
        executable: p.executable,
        application: resolve(p.application),
        path: p.path,
        clearImportPath: p.clearImportPath,
        environment: s.environmentVariables ?? {},
        limits: gatewayLimits(s),
      };
    },
    provision(o, leases, { errorLog, workerProcesses, hostProcesses }) {
      // wsgid: one process per CPU for the whole server, as Ferron's pre-forked pool
      // (REFERENCE-behaviour.md §18), shared out among the worker processes.
      const processes =
        mode === 'wsgid' ? Math.max(1, Math.round(availableParallelism() / workerProcesses)) : 1;
      const spec = {
        mode,
        executable: o.executable,
        application: o.application,
        clearImportPath: o.clearImportPath,
        environment: o.environment,
        threads,
      };
      const key = `python:${mode}:${o.executable}:${o.application}:${o.clearImportPath}`;
      const pool = leases.takeOwn(key, () =>
        mode !== 'wsgid' && hostProcesses !== undefined
          ? new HostedPool({ spec, sockets: hostProcesses({ key, spec, processes }), errorLog })
          : new PythonPool({ spec, processes, errorLog }),
      );
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
