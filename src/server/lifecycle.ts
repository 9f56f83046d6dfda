// Signals, as CONTRACT.md fixes them: SIGTERM and SIGINT stop gracefully (a second one stops at
// once), SIGHUP reloads the configuration, SIGUSR1 reopens the logs after rotation.
import type { Server } from './server.js';

export interface LifecycleHooks {
  /** Re-reads and applies the configuration; reports failures itself. */
  readonly reload: () => Promise<void>;
  readonly say: (message: string) => void;
  /** Once the signals are heard: a SIGHUP sent on seeing the start line must not kill the process. */
  readonly started?: () => void;
}

/** Resolves with the exit status once the server has stopped. */
export function serveUntilStopped(server: Server, hooks: LifecycleHooks): Promise<number> {
  return new Promise((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) {
        hooks.say(`${signal} again: stopping now`);
        process.exit(1);
      }
      stopping = true;
      hooks.say(`${signal}: stopping gracefully`);
      void server.stop().then(() => {
        for (const [signal, handler] of handlers) process.off(signal, handler);
        resolve(0);
      });
    };
    const handlers: [NodeJS.Signals, () => void][] = [
      ['SIGTERM', () => stop('SIGTERM')],
      ['SIGINT', () => stop('SIGINT')],
      ['SIGHUP', () => void hooks.reload()],
      ['SIGUSR1', () => void server.reopenLogs().then(() => hooks.say('logs reopened'))],
    ];
    for (const [signal, handler] of handlers) process.on(signal, handler);
    hooks.started?.();
  });
}
