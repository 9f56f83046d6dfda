// A worker's side of the Python processes its primary runs for all workers (python-hosting.ts):
// each module asks, while a configuration's Plan is compiled, for the processes of that
// configuration's generation, and the primary answers with their sockets once they serve.
import type { HostProcesses, HostRequest } from '../plan/module.js';
import type { FromWorker, ToWorker } from './messages.js';

interface Pending {
  resolve(sockets: readonly string[]): void;
  reject(error: Error): void;
}

export class HostedProcesses {
  /**
   * The generation of the configuration being compiled, set before each start and prepare: the
   * primary sends one configuration at a time, and a module asks while its Plan compiles.
   */
  generation = 0;
  private nextRequest = 1;
  /** One per application of a Plan being prepared; the primary answers each. */
  private readonly pending = new Map<number, Pending>();

  constructor(private readonly send: (message: FromWorker) => void) {}

  readonly ask: HostProcesses = (host: HostRequest) => {
    const request = this.nextRequest++;
    const generation = this.generation;
    return new Promise((resolve, reject) => {
      this.pending.set(request, { resolve, reject });
      this.send({ type: 'host', request, generation, host });
    });
  };

  take(m: Extract<ToWorker, { type: 'hosted' }>): void {
    const pending = this.pending.get(m.request);
    if (pending === undefined) return;
    this.pending.delete(m.request);
    if (m.sockets !== undefined) pending.resolve(m.sockets);
    else pending.reject(new Error(m.error ?? 'the primary could not start them'));
  }
}
