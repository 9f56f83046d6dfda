// Admission to one backend: at most `connections` requests in flight to it, none of one client
// connection's beyond its `perClient` share, the rest waiting their turn in a queue bounded in
// length and in time. A client connection (an HTTP/2 session's hundred streams, say) can then
// take only its share of a backend, and a flood waits or is refused rather than growing a queue.
import { HttpError } from '../http/http-error.js';

export interface GateLimits {
  /** Requests in flight to the backend at once. */
  readonly connections: number;
  /** Of those, how many one client connection may hold. */
  readonly perClient: number;
  /** Requests waiting for a turn; beyond, 503. */
  readonly queue: number;
  /** How long one may wait; beyond, 503. */
  readonly waitMs: number;
}

interface Waiter {
  readonly client: object;
  readonly grant: () => void;
  readonly timer: NodeJS.Timeout;
}

/** The client's response: its 'close' says the client has gone (or was reset). */
export interface Closing {
  once(event: 'close', listener: () => void): unknown;
  off(event: 'close', listener: () => void): unknown;
}

/** Thrown to a waiter whose client left: nobody is there to answer. */
export class ClientLeft extends Error {}

export class BackendGate {
  private active = 0;
  /** Slots held per client connection (the request's socket, or its HTTP/2 session's). */
  private readonly held = new Map<object, number>();
  /** In arrival order; a Set so a waiter whose client leaves is taken out at once. */
  private readonly waiting = new Set<Waiter>();

  constructor(
    private readonly limits: GateLimits,
    /** Names the backend in a refusal's detail. */
    private readonly name: string,
  ) {}

  get inFlight(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiting.size;
  }

  /**
   * Takes a slot for `client` now if one is free to it. Whenever a slot is free, every waiter is
   * one its share holds back, so a newcomer passes no one it should have followed.
   */
  enter(client: object): boolean {
    if (this.active >= this.limits.connections) return false;
    const held = this.held.get(client) ?? 0;
    if (held >= this.limits.perClient) return false;
    this.take(client, held);
    return true;
  }

  /**
   * Waits for a slot. Rejects with a 503 (Retry-After) when the queue is full or the wait too
   * long, and with ClientLeft when the client's response closes first. Call after enter() refused.
   */
  wait(client: object, response: Closing): Promise<void> {
    if (this.waiting.size >= this.limits.queue)
      return Promise.reject(this.refusal(client, `the queue is full (${this.waiting.size} wait)`));
    return new Promise<void>((resolve, reject) => {
      const left = () => {
        clearTimeout(waiter.timer);
        this.waiting.delete(waiter);
        reject(new ClientLeft());
      };
      const waiter: Waiter = {
        client,
        grant: () => {
          response.off('close', left);
          resolve();
        },
        timer: setTimeout(() => {
          this.waiting.delete(waiter);
          response.off('close', left);
          reject(this.refusal(client, `no turn came within ${this.limits.waitMs} ms`));
        }, this.limits.waitMs),
      };
      this.waiting.add(waiter);
      response.once('close', left);
    });
  }

  /** Gives back a slot taken by enter() or a granted wait(). */
  leave(client: object): void {
    this.active--;
    const held = this.held.get(client)! - 1;
    if (held === 0) this.held.delete(client);
    else this.held.set(client, held);
    for (const waiter of this.waiting) {
      if (this.active >= this.limits.connections) return;
      const theirs = this.held.get(waiter.client) ?? 0;
      if (theirs >= this.limits.perClient) continue;
      this.waiting.delete(waiter);
      clearTimeout(waiter.timer);
      this.take(waiter.client, theirs);
      waiter.grant();
    }
  }

  private take(client: object, held: number): void {
    this.active++;
    this.held.set(client, held + 1);
  }

  private refusal(client: object, why: string): HttpError {
    const { connections, perClient, waitMs } = this.limits;
    const held = this.held.get(client) ?? 0;
    return new HttpError(503, 'upstream-busy', {
      // One connection's worth of patience: the queue turns over within the wait limit.
      headers: [['Retry-After', String(Math.max(1, Math.ceil(waitMs / 1000)))]],
      detail:
        `proxy to ${this.name}: ${why}; ${this.active} of ${connections} connections in flight, ` +
        `${held} of them this client's (its share: ${perClient})`,
    });
  }
}
