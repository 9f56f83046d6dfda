// `portico run [-c FILE]`: load, validate, start; serve until SIGTERM/SIGINT. SIGHUP re-reads the
// same file: an invalid one is reported and the running configuration keeps serving. With
// `workers` above 1 a primary process starts the workers that serve (workers/primary.ts).
import { AdminApi } from '../admin/admin-api.js';
import { serveUntilStopped } from '../server/lifecycle.js';
import { Server } from '../server/server.js';
import type { Primary } from '../workers/primary.js';
import { workerCount } from '../workers/worker-count.js';
import { loadChosenConfig, printDiagnostics, printOverrides } from './config-file.js';
import type { CommandIo } from './io.js';

export async function runCommand(configFile: string | undefined, io: CommandIo): Promise<number> {
  const result = await loadChosenConfig(configFile);
  printDiagnostics(result.diagnostics, io);
  const config = result.config;
  if (!config) return 1;
  printOverrides(config, io.stderr);
  const reloadSource = () => loadChosenConfig(configFile);
  const workers = workerCount(config.global.workers);
  // A single process loads none of the primary's code (prom-client's aggregator among it).
  const start = async (): Promise<Server | Primary> => {
    if (workers === 1)
      return Server.start(config, {
        stderr: io.stderr,
        reloadSource,
        controlPlane: (s) => new AdminApi(s),
      });
    const { Primary } = await import('../workers/primary.js');
    return Primary.start(config, { workers, stderr: io.stderr, reloadSource });
  };
  let server: Server | Primary;
  try {
    server = await start();
  } catch (e) {
    io.stderr.write(`portico run: ${(e as Error).message}\n`);
    return 1;
  }
  const say = (message: string) => server.log(message);
  const admin = server.adminUrl === undefined ? '' : `; admin API on ${server.adminUrl}`;
  const processes = 'workerCount' in server ? `; ${server.workerCount} worker processes` : '';
  const started = `Portico is serving ${server.listenerUrls.join(', ')}${admin} (configuration: ${result.label}${processes})`;
  return serveUntilStopped(server, {
    say,
    reload: async () => void (await server.reloadFromSource('SIGHUP')),
    started: () => {
      say(started);
      // The operator at the terminal hears it too, when the error log goes to a file.
      if (config.global.errorLogFilePath !== undefined) io.stderr.write(`${started}\n`);
    },
    ...('stopNow' in server ? { stopNow: (signal) => server.stopNow(signal) } : {}),
  });
}
