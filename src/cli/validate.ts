// `portico validate [-c] [FILE]`: every error and warning, then `configuration OK` or exit 1.
import { loadChosenConfig, printDiagnostics } from './config-file.js';
import type { CommandIo } from './io.js';

export async function validateCommand(
  configFile: string | undefined,
  io: CommandIo,
): Promise<number> {
  const result = await loadChosenConfig(configFile);
  printDiagnostics(result.diagnostics, io);
  if (!result.config) {
    const count = result.diagnostics.filter((d) => d.severity === 'error').length;
    io.stderr.write(
      `${result.label}: ${count} error${count === 1 ? '' : 's'}, configuration not valid\n`,
    );
    return 1;
  }
  // Without a file anywhere, say what was checked: a typo in the file name is not "OK".
  if (result.builtIn)
    io.stdout.write(
      'no configuration file (portico.kdl, portico.yaml or portico.yml) here: checked the built-in default\n',
    );
  io.stdout.write('configuration OK\n');
  return 0;
}
