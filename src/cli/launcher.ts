// What bin/portico.js runs. `portico run` in a process without NODE_FLAGS (`node bin/portico.js
// run`, a unit file naming node) starts the server again in a child process with them, so that the
// flags apply however Portico is started; this process then only passes signals on and exits
// with the child's status. Other commands, and a run that has the flags, go straight to main().
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { hasNodeFlags, NODE_FLAGS } from './node-flags.js';

// The signals the server acts on (server/lifecycle.ts), passed to it as IPC messages; the
// environment variable tells it to listen for them.
const RELAYED_SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGUSR1'];
const RELAYED_ENV = { PORTICO_RELAYED: '1' };

export async function launch(argv: string[], script: string): Promise<number> {
  if (argv[0] !== 'run' || hasNodeFlags()) return (await import('./main.js')).main(argv);
  return relaunch(script, argv);
}

function relaunch(script: string, argv: string[]): Promise<number> {
  // The user's own Node flags come after Portico's, so that theirs win where both set one.
  const child = spawn(process.execPath, [...NODE_FLAGS, ...process.execArgv, script, ...argv], {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, ...RELAYED_ENV },
  });
  // Signals are held until the child says it hears them: one sent while it starts (a container
  // stopped at once) would otherwise be lost. Left in place when the child has exited: a signal
  // arriving as this process ends is not its death.
  let heard = false;
  const held: NodeJS.Signals[] = [];
  const pass = (signal: NodeJS.Signals) => {
    // A child that has just exited cannot take it; its exit is what this process waits for.
    if (child.connected) child.send({ relayedSignal: signal }, () => undefined);
  };
  child.on('message', (message: { relayHeard?: unknown } | null) => {
    if (message?.relayHeard !== true || heard) return;
    heard = true;
    for (const signal of held.splice(0)) pass(signal);
  });
  for (const signal of RELAYED_SIGNALS)
    process.on(signal, () => {
      if (heard) pass(signal);
      else if (held.length < RELAYED_SIGNALS.length * 2) held.push(signal);
    });
  return new Promise((resolve) => {
    child.on('error', (e) => {
      process.stderr.write(`portico run: cannot start ${process.execPath}: ${e.message}\n`);
      resolve(1);
    });
    // Killed by a signal: the status a shell gives such a process, 128 + its number.
    child.on('exit', (code, signal) =>
      resolve(code ?? 128 + (signal ? constants.signals[signal] : 0)),
    );
  });
}
