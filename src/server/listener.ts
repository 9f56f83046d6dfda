// One listening socket and the HTTP server on it. It knows its open connections, so it can stop
// gracefully: stop accepting, let in-flight requests finish within a bound, then close the rest.
import { createServer, type Server as HttpServer } from 'node:http';
import type { Socket } from 'node:net';
import type { ListenerSpec } from '../plan/compile.js';
import type { Request, Response } from './ctx.js';

export type Dispatch = (req: Request, res: Response, scheme: 'http' | 'https') => void;

/** Connection time limits. The defaults defeat slow clients (slowloris) without hurting real ones. */
export interface ConnectionLimits {
  /** The whole header block must arrive within this. */
  readonly headersTimeoutMs: number;
  /** A whole request, body included, must arrive within this. */
  readonly requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  readonly keepAliveTimeoutMs: number;
  /** How often the two limits above are checked. */
  readonly checkIntervalMs: number;
}

export const DEFAULT_LIMITS: ConnectionLimits = {
  headersTimeoutMs: 30_000,
  requestTimeoutMs: 300_000,
  keepAliveTimeoutMs: 5_000,
  checkIntervalMs: 2_000,
};

export class ListenError extends Error {}

export class Listener {
  private readonly server: HttpServer;
  private readonly sockets = new Set<Socket>();

  constructor(
    readonly spec: ListenerSpec,
    dispatch: Dispatch,
    limits: ConnectionLimits = DEFAULT_LIMITS,
  ) {
    if (spec.secure) throw new ListenError(`${spec.id}: HTTPS (secure: true) is not available in this build of Portico yet`);
    this.server = createServer(
      {
        headersTimeout: limits.headersTimeoutMs,
        requestTimeout: limits.requestTimeoutMs,
        keepAliveTimeout: limits.keepAliveTimeoutMs,
        connectionsCheckingInterval: limits.checkIntervalMs,
        noDelay: true,
      },
      (req, res) => dispatch(req, res, 'http'),
    );
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    // A client that sends garbage gets a 400 and is closed; nothing reaches the log as a crash.
    this.server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
      if (err.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
      const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
      socket.end(`HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request'}\r\nConnection: close\r\nContent-Length: 0\r\nServer: Portico\r\n\r\n`);
    });
  }

  get connections(): number {
    return this.sockets.size;
  }

  /** The bound port (useful when a test asked for an ephemeral one). */
  get port(): number {
    const address = this.server.address();
    return typeof address === 'object' && address ? address.port : this.spec.port;
  }

  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      const onError = (err: NodeJS.ErrnoException) => {
        this.server.off('listening', onListening);
        reject(new ListenError(`cannot listen on ${this.spec.id}: ${explain(err)}`));
      };
      const onListening = () => {
        this.server.off('error', onError);
        resolve();
      };
      this.server.once('error', onError);
      this.server.once('listening', onListening);
      this.server.listen({ port: this.spec.port, host: this.spec.address, ipv6Only: false });
    });
  }

  /** Stops accepting, waits up to `graceMs` for in-flight requests, then closes what is left. */
  async close(graceMs: number): Promise<void> {
    if (!this.server.listening) return;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    // Keep-alive connections become idle as their last response ends; close them as they do.
    this.server.closeIdleConnections();
    const sweep = setInterval(() => this.server.closeIdleConnections(), 50);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.server.closeAllConnections();
        resolve();
      }, graceMs);
    });
    await Promise.race([closed, deadline]);
    clearTimeout(timer);
    clearInterval(sweep);
    await closed;
  }
}

function explain(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'EADDRINUSE':
      return 'the address is already in use (another server is listening there)';
    case 'EACCES':
      return 'permission denied (ports below 1024 need root or CAP_NET_BIND_SERVICE)';
    case 'EADDRNOTAVAIL':
      return 'this machine has no such address';
    default:
      return err.message;
  }
}
