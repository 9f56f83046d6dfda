// A worker's side of the Python processes its primary runs for every worker
// (workers/python-hosting.ts): one connection to each, each request given to the less busy at
// random, as PythonPool does with processes of its own. A connection lost (its process died) or
// told GOAWAY (its process is being replaced) is made again to the same socket, where the primary
// starts the replacement; requests wait for it as they wait for a process restarting. Closing
// ends the connections, which lets the primary retire the processes once no worker uses them.
import type { Logger } from '../http/logger.js';
import { PythonConnection } from './connection.js';
import type { PythonSpec } from './frame-channel.js';
import { WaitingRequests } from './waiting-requests.js';
import { lessBusyOfTwo } from './less-busy.js';

/** Reconnection back-off: from the first, doubled up to the last while the socket refuses. */
const RECONNECT_FIRST_MS = 50;
const RECONNECT_MAX_MS = 1_000;

export interface HostedPoolOptions {
  readonly spec: PythonSpec;
  /** The sockets of the processes the primary started for this Plan; rejects with why not. */
  readonly sockets: Promise<readonly string[]>;
  readonly errorLog: Logger;
}

export class HostedPool {
  private slots: (PythonConnection | undefined)[] = [];
  /** Connections told GOAWAY, finishing what they carry. */
  private readonly draining = new Set<PythonConnection>();
  /** Connections being made again, not serving yet. */
  private readonly connecting = new Set<PythonConnection>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly waiting = new WaitingRequests<PythonConnection>();
  private paths: readonly string[] = [];
  private started: Promise<void> | undefined;
  private closed = false;
  private reconnections = 0;

  constructor(private readonly options: HostedPoolOptions) {
    // Read by start(); a Plan discarded before it asks must not leave the rejection unhandled.
    options.sockets.catch(() => undefined);
  }

  /** Connected to every process; rejects with PythonStartError. */
  start(): Promise<void> {
    this.started ??= this.connectAll();
    return this.started;
  }

  /** A connection for one request, at once when one is up: the less busy of two at random. */
  choose(): PythonConnection | undefined {
    return lessBusyOfTwo(this.slots);
  }

  /** A connection, waiting a while when every process is being replaced. */
  async worker(): Promise<PythonConnection | undefined> {
    const now = this.choose();
    if (now !== undefined || this.closed) return now;
    return this.waiting.wait();
  }

  status(): Record<string, unknown> {
    const { mode, application } = this.options.spec;
    const info = this.slots.find((c) => c?.info !== undefined)?.info;
    return {
      mode,
      application,
      python: info?.python ?? null,
      executable: info?.executable ?? null,
      processes: this.slots.map((c) =>
        c === undefined ? null : { pid: c.pid, requests_in_flight: c.load },
      ),
      restarts: this.reconnections,
      // The processes are the primary's: it counts them in its own metrics.
      hosted: true,
    };
  }

  /** Ends every connection: what they carry has ended (the Plan is retired) or stop is forced. */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.waiting.offer(undefined);
    await this.started?.catch(() => undefined);
    for (const c of [...this.slots, ...this.draining, ...this.connecting]) c?.close();
  }

  /**
   * The primary's answer says whether the processes could start. Once it has, a socket that
   * refuses is a process being replaced: the slot connects again, as for one lost later, and
   * requests wait for it meanwhile.
   */
  private async connectAll(): Promise<void> {
    const { spec, errorLog } = this.options;
    this.paths = await this.options.sockets;
    const connections = this.paths.map((path) => new PythonConnection(spec, errorLog, path));
    const greeted = await Promise.allSettled(connections.map((c) => c.ready));
    this.slots = connections.map(() => undefined);
    greeted.forEach((g, slot) => {
      if (g.status === 'fulfilled') this.attach(slot, connections[slot]!);
      else this.reconnect(slot, RECONNECT_FIRST_MS);
    });
  }

  private attach(slot: number, connection: PythonConnection): void {
    this.slots[slot] = connection;
    // One that closed between its READY and now is made again too.
    if (!connection.usable) return this.lost(slot, connection);
    connection.onClose = () => this.lost(slot, connection);
    connection.onGoAway = () => {
      this.draining.add(connection);
      this.lost(slot, connection);
    };
    this.waiting.offer(connection);
  }

  private lost(slot: number, connection: PythonConnection): void {
    if (connection.lost) this.draining.delete(connection);
    if (this.slots[slot] !== connection) return;
    this.slots[slot] = undefined;
    this.reconnect(slot, RECONNECT_FIRST_MS);
  }

  /** A new connection to the slot's socket after `delay`, tried again until one serves. */
  private reconnect(slot: number, delay: number): void {
    if (this.closed) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (this.closed) return;
      const { spec, errorLog } = this.options;
      const connection = new PythonConnection(spec, errorLog, this.paths[slot]!);
      this.connecting.add(connection);
      connection.ready.then(
        () => {
          this.connecting.delete(connection);
          if (this.closed) return connection.close();
          this.reconnections++;
          this.attach(slot, connection);
        },
        () => {
          this.connecting.delete(connection);
          this.reconnect(slot, Math.min(delay * 2, RECONNECT_MAX_MS));
        },
      );
    }, delay);
    this.timers.add(timer);
  }
}
