// A reload asked for by SIGHUP or the admin API: the configuration source read again, and the
// outcome both answered (the admin API's status and body) and written to the error log in the
// same lines whatever asked. Shared by a single-process Server and a primary over its workers.
import { formatDiagnostic } from '../config/diagnostics.js';
import type { LoadResult } from '../config/load.js';
import type { Config } from '../config/validate.js';
import { PlanNotReady } from '../plan/compile.js';

export type ReloadOutcome =
  | { readonly ok: true; readonly reloads: number }
  | {
      readonly ok: false;
      readonly status: 422 | 500 | 503;
      readonly error: string;
      readonly details: readonly string[];
    };

export interface ReloadSteps {
  readonly source: (() => Promise<LoadResult>) | undefined;
  readonly stopping: () => boolean;
  /** Runs reloads one at a time, in the order asked. */
  readonly serialized: <T>(task: () => Promise<T>) => Promise<T>;
  /** Applies a valid configuration; never throws. */
  readonly apply: (config: Config) => Promise<ReloadOutcome>;
  readonly log: (line: string) => void;
  readonly listenerUrls: () => readonly string[];
  /** Who asked, for the log: SIGHUP, the admin API. */
  readonly by: string | undefined;
}

/** The outcome of a reload whose configuration was valid but failed to apply. */
export function reloadFailure(e: unknown, invalid = e instanceof PlanNotReady): ReloadOutcome {
  const details = (e as Error).message.split('\n');
  // An application that cannot start is the configuration's fault, as an invalid file is.
  if (invalid) return { ok: false, status: 422, error: 'invalid configuration', details };
  return { ok: false, status: 500, error: 'reload failed', details };
}

export async function reloadFromSource(steps: ReloadSteps): Promise<ReloadOutcome> {
  let diagnostics: readonly string[] = [];
  let label: string | undefined;
  let written = false;
  const run = async (): Promise<ReloadOutcome> => {
    if (steps.stopping())
      return {
        ok: false,
        status: 503,
        error: 'shutting down',
        details: ['the server is shutting down; the configuration is not reloaded'],
      };
    if (!steps.source)
      return {
        ok: false,
        status: 500,
        error: 'reload failed',
        details: ['this server has no configuration file to reload from'],
      };
    const next = await steps.source();
    label = (next as { label?: string }).label;
    diagnostics = next.diagnostics.map(formatDiagnostic);
    if (!next.config) {
      const details = next.diagnostics.filter((d) => d.severity === 'error').map(formatDiagnostic);
      written = true;
      return { ok: false, status: 422, error: 'invalid configuration', details };
    }
    return steps.apply(next.config);
  };
  const outcome = await steps.serialized(run);
  const log = steps.log;
  const by = steps.by;
  const asked = `${by === undefined ? '' : ` by ${by}`}${label === undefined ? '' : ` (${label})`}`;
  for (const line of diagnostics) log(`reload: ${line}`);
  if (outcome.ok) log(`reloaded${asked}; serving ${steps.listenerUrls().join(', ')}`);
  else {
    // An invalid configuration's details are its error diagnostics, already written.
    if (!written) for (const line of outcome.details) log(`reload: ${line}`);
    log(`reload${asked} refused (${outcome.error}); the running configuration keeps serving`);
  }
  return outcome;
}
