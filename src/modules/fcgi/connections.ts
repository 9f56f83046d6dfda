// FastCGI connections to one target, kept open between requests (FCGI_KEEP_CONN), as nginx's
// `fastcgi_keep_conn` with an upstream `keepalive`: idle ones wait in a bounded list, the most
// recently used first; one that the application closes while idle (php-fpm's pm.max_requests, a
// restart) leaves the list at once. Shared by every Plan that names the target.
import type { Socket } from 'node:net';
import { connectTo, type SocketAddress } from '../../gateway/socket-address.js';

/** Idle connections kept per target (nginx's keepalive); more are closed when they come back. */
export const MAX_IDLE = 64;
/** How long a new connection may take. */
export const CONNECT_TIMEOUT_MS = 10_000;
/**
 * How long a request on a new connection may go unanswered before it counts as waiting in the
 * application's listen queue. php-fpm's child stays with a kept connection until it closes, so a
 * connection opened beyond its children waits there for ever while the kept ones sit idle; a
 * starving request makes the pool close kept connections, freeing their children.
 */
export const STARVING_MS = 20;

export interface Taken {
  readonly socket: Socket;
  /** Taken from the idle list: the application may have closed it in the meantime. */
  readonly reused: boolean;
}

export class FcgiConnections {
  private readonly idle: Socket[] = [];
  private closed = false;
  /** When each request sent on a new connection and not answered yet was sent. */
  private readonly unanswered = new Set<{ readonly since: number }>();

  constructor(readonly address: SocketAddress) {}

  /** An idle connection, or a new one; always a new one when `fresh` (a retry). */
  async take(fresh = false): Promise<Taken> {
    for (let socket = fresh ? undefined : this.idle.pop(); socket; socket = this.idle.pop()) {
      for (const event of ['close', 'end', 'error', 'data']) socket.removeAllListeners(event);
      socket.pause();
      if (!socket.destroyed && socket.writable) return { socket, reused: true };
    }
    return { socket: await this.connect(), reused: false };
  }

  /**
   * A request went out on a new connection: until the returned function is called (its first
   * answer, or its end), it may be in the listen queue. Past STARVING_MS, an idle connection is
   * closed so that its child takes the queue's next connection.
   */
  sentOnNew(): () => void {
    const entry = { since: Date.now() };
    this.unanswered.add(entry);
    const timer = setTimeout(() => this.idle.shift()?.destroy(), STARVING_MS);
    return () => {
      clearTimeout(timer);
      this.unanswered.delete(entry);
    };
  }

  private starving(): boolean {
    const now = Date.now();
    for (const { since } of this.unanswered) if (now - since >= STARVING_MS) return true;
    return false;
  }

  /**
   * A connection whose request ended cleanly; kept unless the list is full, the pool closed, or a
   * request starves in the listen queue (closing it frees the child that kept it).
   */
  give(socket: Socket): void {
    if (
      this.closed ||
      this.idle.length >= MAX_IDLE ||
      socket.destroyed ||
      !socket.writable ||
      this.starving()
    )
      return void socket.destroy();
    for (const event of ['close', 'end', 'error', 'data']) socket.removeAllListeners(event);
    const drop = () => {
      const at = this.idle.indexOf(socket);
      if (at >= 0) this.idle.splice(at, 1);
      socket.destroy();
    };
    // Anything from the application while idle (it closed, or misbehaves) ends the connection.
    socket.once('close', drop);
    socket.once('end', drop);
    socket.once('error', drop);
    socket.once('data', drop);
    socket.resume();
    this.idle.push(socket);
  }

  close(): void {
    this.closed = true;
    for (const socket of this.idle) socket.destroy();
    this.idle.length = 0;
  }

  private connect(): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const socket = connectTo(this.address);
      const timer = setTimeout(() => {
        socket.destroy();
        reject(Object.assign(new Error('connect timed out'), { code: 'ETIMEDOUT' }));
      }, CONNECT_TIMEOUT_MS);
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.off('error', onError);
        resolve(socket);
      });
      const onError = (e: Error) => {
        clearTimeout(timer);
        reject(e);
      };
      socket.once('error', onError);
    });
  }
}
