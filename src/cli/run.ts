// `portico run [-c FILE]`: loads and validates the configuration; the HTTP server is not part of
// this build yet, so after a valid configuration it says so instead of pretending to serve.
import { loadChosenConfig, printDiagnostics } from './config-file.js';
import type { CommandIo } from './io.js';

export async function runCommand(configFile: string | undefined, io: CommandIo): Promise<number> {
  const result = await loadChosenConfig(configFile);
  printDiagnostics(result.diagnostics, io);
  if (!result.config) return 1;
  io.stderr.write(`portico run: ${result.label} is valid, but this build has no HTTP server yet\n`);
  return 1;
}
