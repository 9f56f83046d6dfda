// One listening socket and the server on it: HTTP/1.1, or over TLS HTTPS with HTTP/2 negotiated
// by ALPN (HTTP/1.1 the fallback). It knows its open connections, so it can stop gracefully: stop
// accepting, let in-flight requests finish within a bound, then close the rest. A reload hands a
// TLS listener new certificates and policy without closing it.
import { createServer, type Server as HttpServer } from 'node:http';
import type { Http2SecureServer, ServerHttp2Session } from 'node:http2';
import type { Socket } from 'node:net';
import type { SecureContext, TLSSocket } from 'node:tls';
import type { ListenerSpec, TlsSetup } from '../plan/compile.js';
import type { Request, Response } from './ctx.js';
import { http2Module, httpsModule } from './lazy-modules.js';

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

// A TLS client must finish its handshake within this; an idle HTTP/2 session is closed after this.
const HANDSHAKE_TIMEOUT_MS = 10_000;
const HTTP2_IDLE_MS = 120_000;

type AnyServer = HttpServer | Http2SecureServer;

export class Listener {
  private readonly server: AnyServer;
  private readonly sockets = new Set<Socket>();
  private readonly sessions = new Set<ServerHttp2Session>();
  private tls: TlsSetup | undefined;

  constructor(
    readonly spec: ListenerSpec,
    dispatch: Dispatch,
    limits: ConnectionLimits = DEFAULT_LIMITS,
    tls?: TlsSetup,
  ) {
    const http1 = {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: limits.checkIntervalMs,
      noDelay: true,
    };
    if (!spec.secure) {
      this.server = createServer(http1, (req, res) => dispatch(req, res, 'http'));
    } else {
      if (!tls?.certificates.fallback) throw new ListenError(`${spec.id}: HTTPS needs a certificate (cert and key)`);
      this.tls = tls;
      const options = {
        ...http1,
        ...tls.policy,
        ...tls.fallbackPair,
        handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
        requestCert: tls.requestCert,
        rejectUnauthorized: tls.requestCert,
        // Reads the listener's current certificates, so a reload's new ones apply to new handshakes.
        SNICallback: (name: string, done: (err: Error | null, context?: SecureContext) => void) => done(null, this.tls!.certificates.select(name)),
      };
      const handler = (req: Request, res: Response) => dispatch(req, res, 'https');
      if (tls.http2) {
        const h2 = http2Module().createSecureServer({ ...options, allowHTTP1: true, settings: tls.http2Settings }, (req, res) => {
          if (req.httpVersionMajor === 1) this.headWindow(req.socket as Socket, res, limits.headersTimeoutMs);
          handler(req, res);
        });
        h2.setTimeout(HTTP2_IDLE_MS);
        // HTTP/1.1 clients of this listener (the ALPN fallback) are served by Node's HTTP/2 server,
        // which applies none of the HTTP/1 header and keep-alive limits: a slow client would hold
        // its connection for ever. Each such connection must send a complete request head within
        // the header limit of connecting, and of each response's end.
        h2.on('secureConnection', (socket: TLSSocket) => {
          if (socket.alpnProtocol !== 'h2') this.armHeadDeadline(socket, limits.headersTimeoutMs);
        });
        h2.on('session', (session: ServerHttp2Session) => {
          this.sessions.add(session);
          session.once('close', () => this.sessions.delete(session));
        });
        this.server = h2;
      } else {
        this.server = httpsModule().createServer(options, handler);
      }
      // Failed handshakes (a client without a certificate, a scanner) end the connection only.
      this.server.on('tlsClientError', (_err: Error, socket: TLSSocket) => socket.destroy());
      // Always listening, so a reload can switch stapling on or off for new handshakes.
      this.server.on('OCSPRequest', (certificate: Buffer, issuer: Buffer | null, done: (err: Error | null, response?: Buffer) => void) => {
        const staple = this.tls?.onOcspRequest;
        if (staple) staple(certificate, issuer, done);
        else done(null);
      });
    }
    const connectionEvent = spec.secure ? 'secureConnection' : 'connection';
    this.server.on(connectionEvent, (socket: Socket) => {
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

  private readonly headDeadlines = new WeakMap<Socket, NodeJS.Timeout>();

  private armHeadDeadline(socket: Socket, ms: number): void {
    const previous = this.headDeadlines.get(socket);
    // One close listener per connection, however many requests it carries.
    if (previous === undefined) socket.once('close', () => clearTimeout(this.headDeadlines.get(socket)));
    clearTimeout(previous);
    this.headDeadlines.set(socket, setTimeout(() => socket.destroy(), ms).unref());
  }

  /** A request head arrived: no deadline while it is served; the next head gets a new one. */
  private headWindow(socket: Socket, res: Response, ms: number): void {
    clearTimeout(this.headDeadlines.get(socket));
    res.once('finish', () => {
      if (!socket.destroyed) this.armHeadDeadline(socket, ms);
    });
  }

  /** New certificates and policy for new handshakes (reload); open connections are not touched. */
  updateTls(tls: TlsSetup): void {
    if (!this.spec.secure || !tls.certificates.fallback) return;
    this.tls = tls;
    const server = this.server as unknown as import('node:tls').Server & { requestCert: boolean; rejectUnauthorized: boolean };
    server.setSecureContext({ ...tls.policy, ...tls.fallbackPair });
    if (tls.http2 && 'updateSettings' in this.server) (this.server as Http2SecureServer).updateSettings(tls.http2Settings ?? {});
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
    let sweep: NodeJS.Timeout | undefined;
    if ('closeIdleConnections' in this.server) {
      // Keep-alive connections become idle as their last response ends; close them as they do.
      const http1 = this.server;
      http1.closeIdleConnections();
      sweep = setInterval(() => http1.closeIdleConnections(), 50);
    } else {
      // HTTP/2: GOAWAY to every session; streams in flight finish.
      for (const session of this.sessions) session.close();
    }
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        if ('closeAllConnections' in this.server) this.server.closeAllConnections();
        for (const session of this.sessions) session.destroy();
        for (const socket of this.sockets) socket.destroy();
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
