// FastCGI connections to one target, kept open between requests (FCGI_KEEP_CONN), as nginx's
// `fastcgi_keep_conn` with an upstream `keepalive`: idle ones wait in a bounded list, the most
// recently used first; one that the application closes while idle (php-fpm's pm.max_requests, a
// restart) leaves the list at once. Shared by every Plan that names the target.
//
// A php-fpm child serves one connection until it closes, so a kept connection holds a child. While
// some request is still waiting for its first byte (likely queued behind busy children), a
// connection that comes back is closed instead of kept: its child then takes the next queued
// connection. Without that, nginx's keepalive starves the queued ones under load (here its p99
// was 1.4 s with 64 clients and 4 children).
import type { Socket } from 'node:net';
import { connectTo, type SocketAddress } from '../../gateway/socket-address.js';

/** Idle connections kept per target (nginx's keepalive); more are closed when they come back. */
export const MAX_IDLE = 64;
/** How long a new connection may take. */
export const CONNECT_TIMEOUT_MS = 10_000;

export interface Taken {
  readonly socket: Socket;
  /** Taken from the idle list: the application may have closed it in the meantime. */
  readonly reused: boolean;
}

export class FcgiConnections {
  private readonly idle: Socket[] = [];
  private closed = false;
  /** Requests sent whose answer has not begun. */
  private waiting = 0;

  constructor(readonly address: SocketAddress) {}

  async take(): Promise<Taken> {
    for (let socket = this.idle.pop(); socket !== undefined; socket = this.idle.pop()) {
      for (const event of ['close', 'end', 'error', 'data']) socket.removeAllListeners(event);
      socket.pause();
      if (!socket.destroyed && socket.writable) return { socket, reused: true };
    }
    return { socket: await this.connect(), reused: false };
  }

  /** A request was sent on a connection: its answer has not begun. */
  sent(): void {
    this.waiting++;
  }

  /** The answer to a request `sent` began, or the request ended without one. */
  answered(): void {
    this.waiting--;
  }

  /** A connection whose request ended cleanly; kept unless the list is full or closed. */
  give(socket: Socket): void {
    if (
      this.closed ||
      this.waiting > 0 ||
      this.idle.length >= MAX_IDLE ||
      socket.destroyed ||
      !socket.writable
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
