// Signals, as CONTRACT.md fixes them: SIGTERM and SIGINT stop gracefully (a second one stops at
// once), SIGHUP reloads the configuration, SIGUSR1 reopens the logs after rotation. Under a parent
// process (the launcher, cli/launcher.ts, or a worker's primary) they also come as its IPC
// messages, which it holds until told they are heard; the launcher's leaving stops the server
// gracefully (a worker whose primary leaves is ended by node:cluster).

/** What signals act on: a Server, or a primary and its workers. */
export interface Stoppable {
  /** Graceful, idempotent. */
  stop(): Promise<void>;
  reopenLogs(): Promise<void>;
}

export interface LifecycleHooks {
  /** Re-reads and applies the configuration; reports failures itself. */
  readonly reload: () => Promise<void>;
  readonly say: (message: string) => void;
  /** Once the signals are heard: a SIGHUP sent on seeing the start line must not kill the process. */
  readonly started?: () => void;
  /** Before the process exits on a second stop signal (a primary passes it on to its workers). */
  readonly stopNow?: (signal: NodeJS.Signals) => void;
}

type Way = 'direct' | 'relayed';

// Set by the launcher or a worker's primary, whose channel this is (a test runner's is left alone).
const relayed = () => process.env.PORTICO_RELAYED === '1' && process.connected;

/** Resolves with the exit status once the server has stopped. */
export function serveUntilStopped(server: Stoppable, hooks: LifecycleHooks): Promise<number> {
  return new Promise((resolve) => {
    let stopping = false;
    // A stop sent to every process of a unit or a terminal's job (systemd, Ctrl-C) reaches the
    // server twice under the launcher, directly and relayed: one request. Sent twice the same way,
    // it is the operator insisting.
    const asked: Record<Way, number> = { direct: 0, relayed: 0 };
    const stop = (signal: NodeJS.Signals | 'leaving', way: Way) => {
      if (++asked[way] > 1 && signal !== 'leaving') {
        hooks.say(`${signal} again: stopping now`);
        hooks.stopNow?.(signal);
        process.exit(1);
      }
      if (stopping) return;
      stopping = true;
      const cause = signal === 'leaving' ? 'the launcher leaving' : signal;
      hooks.say(`${cause}: stopping gracefully`);
      void server.stop().then(() => {
        for (const [signal, handler] of handlers) process.off(signal, handler);
        process.off('message', onMessage).off('disconnect', onDisconnect);
        if (process.connected && relayed()) process.disconnect();
        resolve(0);
      });
    };
    const act: Record<string, (way: Way) => void> = {
      SIGTERM: (way) => stop('SIGTERM', way),
      SIGINT: (way) => stop('SIGINT', way),
      SIGHUP: () => void hooks.reload(),
      SIGUSR1: () => void server.reopenLogs().then(() => hooks.say('logs reopened')),
    };
    const handlers = Object.entries(act).map(
      ([signal, handler]) => [signal, () => handler('direct')] as const,
    );
    for (const [signal, handler] of handlers) process.on(signal, handler);
    const onMessage = (message: unknown) => {
      const signal = (message as { relayedSignal?: unknown } | null)?.relayedSignal;
      if (typeof signal === 'string' && Object.hasOwn(act, signal)) act[signal]!('relayed');
    };
    const onDisconnect = () => {
      if (!stopping) stop('leaving', 'relayed');
    };
    if (relayed()) {
      process.on('message', onMessage).on('disconnect', onDisconnect);
      process.send?.({ relayHeard: true });
    }
    hooks.started?.();
  });
}
