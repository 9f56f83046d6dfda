// Which configuration a command reads: `-c FILE`, else portico.kdl, portico.yaml or portico.yml in
// the working directory, else the built-in default (port 8080, the bundled welcome page).
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatDiagnostic, type Diagnostic } from '../config/diagnostics.js';
import { loadConfig, loadConfigText, type LoadResult } from '../config/load.js';
import type { Config } from '../config/validate.js';
import { PROPERTY_TABLE } from '../modules/registry.js';
import { configChecks } from '../server/config-checks.js';
import type { CommandIo } from './io.js';

export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CANDIDATES = ['portico.kdl', 'portico.yaml', 'portico.yml'];

/**
 * The first candidate present. A link that leads nowhere counts as present, so that loading it
 * reports the broken link instead of quietly serving the built-in default.
 */
export function findConfigFile(cwd: string): string | undefined {
  return CANDIDATES.map((name) => join(cwd, name)).find(
    (path) => lstatSync(path, { throwIfNoEntry: false }) !== undefined,
  );
}

export function builtInConfigText(): string {
  return `global:\n  port: 8080\n  wwwroot: ${JSON.stringify(join(PACKAGE_ROOT, 'wwwroot'))}\n`;
}

/** Loads the configuration a command was pointed at; `label` says where it came from. */
export async function loadChosenConfig(
  file: string | undefined,
  cwd = process.cwd(),
): Promise<LoadResult & { label: string; builtIn: boolean }> {
  const chosen = file ?? findConfigFile(cwd);
  const checks = configChecks();
  const properties = PROPERTY_TABLE;
  if (chosen === undefined)
    return {
      ...loadConfigText(builtInConfigText(), 'yaml', '(built-in default)', { properties, checks }),
      label: '(built-in default)',
      builtIn: true,
    };
  return {
    ...(await loadConfig(chosen, { cwd, properties, checks })),
    label: chosen,
    builtIn: false,
  };
}

export function printDiagnostics(diagnostics: readonly Diagnostic[], io: CommandIo): void {
  for (const d of diagnostics) io.stderr.write(`${formatDiagnostic(d)}\n`);
}

/** Which property each environment override set (never its value: it may be a secret). */
export function printOverrides(config: Config | undefined, out: NodeJS.WritableStream): void {
  for (const o of config?.environment ?? []) out.write(`${o.path}: set by ${o.variable}\n`);
}
