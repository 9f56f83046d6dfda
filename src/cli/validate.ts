// `portico validate [-c] [FILE] [--strict] [--apps]`: every error and warning, then `configuration
// OK` or exit 1; with --strict a warning fails it too (a pipeline that wants no property ignored);
// with --apps the applications start as `run` starts them (apps-check.ts).
import { loadChosenConfig, printDiagnostics, printOverrides } from './config-file.js';
import type { CommandIo } from './io.js';

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export async function validateCommand(
  configFile: string | undefined,
  io: CommandIo,
  { strict = false, apps = false }: { readonly strict?: boolean; readonly apps?: boolean } = {},
): Promise<number> {
  const result = await loadChosenConfig(configFile);
  printDiagnostics(result.diagnostics, io);
  if (!result.config) {
    const count = result.diagnostics.filter((d) => d.severity === 'error').length;
    io.stderr.write(`${result.label}: ${plural(count, 'error')}, configuration not valid\n`);
    return 1;
  }
  const warnings = result.diagnostics.filter((d) => d.severity === 'warning').length;
  if (strict && warnings > 0) {
    io.stderr.write(`${result.label}: ${plural(warnings, 'warning')}, refused by --strict\n`);
    return 1;
  }
  if (apps) {
    const problem = await (await import('./apps-check.js')).startApplications(result.config, io);
    if (problem !== undefined) {
      io.stderr.write(`${result.label}: ${problem}\n`);
      return 1;
    }
  }
  // Without a file anywhere, say what was checked: a typo in the file name is not "OK".
  if (result.builtIn)
    io.stdout.write(
      'no configuration file (portico.kdl, portico.yaml or portico.yml) here: checked the built-in default\n',
    );
  printOverrides(result.config, io.stdout);
  io.stdout.write('configuration OK\n');
  return 0;
}
