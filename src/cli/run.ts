// `portico run [-c FILE]`: load, validate, start; serve until SIGTERM/SIGINT. SIGHUP re-reads the
// same file: an invalid one is reported and the running configuration keeps serving.
import { formatDiagnostic } from '../config/diagnostics.js';
import { serveUntilStopped } from '../server/lifecycle.js';
import { Server } from '../server/server.js';
import { loadChosenConfig, printDiagnostics } from './config-file.js';
import type { CommandIo } from './io.js';

export async function runCommand(configFile: string | undefined, io: CommandIo): Promise<number> {
  const result = await loadChosenConfig(configFile);
  printDiagnostics(result.diagnostics, io);
  if (!result.config) return 1;
  let server: Server;
  try {
    server = await Server.start(result.config, { stderr: io.stderr });
  } catch (e) {
    io.stderr.write(`portico run: ${(e as Error).message}\n`);
    return 1;
  }
  const say = (message: string) => server.errorLog.log(message);
  const started = `Portico is serving ${server.listenerUrls.join(', ')} (configuration: ${result.label})`;
  say(started);
  // The operator at the terminal hears it too, when the error log goes to a file.
  if (result.config.global.errorLogFilePath !== undefined) io.stderr.write(`${started}\n`);
  return serveUntilStopped(server, {
    say,
    reload: async () => {
      const next = await loadChosenConfig(configFile);
      for (const d of next.diagnostics) say(`reload: ${formatDiagnostic(d)}`);
      if (!next.config) return say('reload refused: the configuration is invalid; the running one keeps serving');
      try {
        await server.reload(next.config);
        say(`reloaded (${next.label}); serving ${server.listenerUrls.join(', ')}`);
      } catch (e) {
        say(`reload failed, the running configuration keeps serving: ${(e as Error).message}`);
      }
    },
  });
}
