// One listening socket, and the protocol server its connections are handed to: HTTP/1.1, or over
// TLS HTTPS with HTTP/2 negotiated by ALPN (HTTP/1.1 the fallback). The socket and the protocol are
// separate so a reload that changes the protocol (HTTP/2 or client certificates switched) keeps the
// port bound: new connections go to the new protocol server while the old one drains its own. A
// listener stops gracefully: stop accepting, let in-flight requests finish within a bound, then
// close the rest. A reload hands a TLS protocol server new certificates and policy in place.
import {
  createServer,
  STATUS_CODES,
  ServerResponse,
  type IncomingMessage,
  type Server as HttpServer,
} from 'node:http';
import type { Http2SecureServer, ServerHttp2Session } from 'node:http2';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { SecureContext, Server as TlsServer, TLSSocket } from 'node:tls';
import type { TlsSetup } from '../plan/compile.js';
import type { ListenerSpec } from '../plan/listener-spec.js';
import type { Request, Response } from '../http/ctx.js';
import { normalizeAddress } from '../http/ip-list.js';
import { CertificateContexts } from './certificate-contexts.js';
import { Http1Connections } from './http1-connections.js';
import { Http2Sessions, type SessionLimits } from './http2-sessions.js';
import { http2Streams } from './http2-streams.js';
import { http2Module, httpsModule } from '../tls/lazy-modules.js';

/** `upgrade`: the connection of an HTTP/1.1 request that asked to switch protocols (WebSocket). */
export type Dispatch = (
  req: Request,
  res: Response,
  scheme: 'http' | 'https',
  upgrade?: Duplex,
) => void;

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
  /**
   * An HTTP/2 session that has read nothing for this long is pinged, and destroyed if the ping is
   * not answered within as long again (default 20 s).
   */
  readonly http2LivenessMs?: number;
  /**
   * An HTTP/2 session without streams for this long is closed, at the first check after
   * (default 120 s); the HTTP/1.1 fallback's sockets get it as their timeout.
   */
  readonly http2IdleMs?: number;
  /**
   * A response whose output has waited this long without moving on (a client that stopped
   * reading, or an HTTP/2 window left shut) is cut (default 60 s, nginx's send_timeout).
   */
  readonly sendTimeoutMs?: number;
}

export const DEFAULT_LIMITS: ConnectionLimits = {
  headersTimeoutMs: 30_000,
  requestTimeoutMs: 300_000,
  keepAliveTimeoutMs: 5_000,
  checkIntervalMs: 2_000,
};

export class ListenError extends Error {}

/** A request refused before it was parsed, for the access log. */
export interface Refusal {
  readonly address: string;
  readonly status: number;
  /** The first line of what the client sent (at most 1,000 characters), if anything arrived. */
  readonly line: string | undefined;
  readonly protocol: string;
}

const PLAIN_HTTP_BODY = 'This port speaks HTTPS: ask for https:// instead of http://.\n';
const PLAIN_HTTP_TO_HTTPS =
  'HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n' +
  `Content-Length: ${PLAIN_HTTP_BODY.length}\r\nConnection: close\r\nServer: Portico\r\n\r\n` +
  PLAIN_HTTP_BODY;

// What a refused request's log line quotes of it: enough to recognise, never a megabyte. A head
// too large whose first line alone is that long is a request target too long (414, as nginx
// answers), not too many fields (431).
const MAX_LOGGED_LINE = 1000;

function firstLine(packet: Buffer | undefined): string | undefined {
  if (packet === undefined || packet.length === 0) return undefined;
  const text = packet.subarray(0, MAX_LOGGED_LINE).toString('latin1');
  const end = text.search(/\r|\n/);
  return end < 0 ? text : text.slice(0, end);
}

// How long a refused client may keep its end open after the answer (nginx's lingering_timeout is 5 s).
const LINGER_MS = 2_000;
// A TLS client must finish its handshake within this.
const HANDSHAKE_TIMEOUT_MS = 10_000;
// The defaults of http2IdleMs and http2LivenessMs.
const HTTP2_IDLE_MS = 120_000;
const HTTP2_LIVENESS_MS = 20_000;
const SEND_TIMEOUT_MS = 60_000;
// How long an HTTP/1 CONNECT's or Upgrade request's socket may take to receive its answer.
const BARE_ANSWER_MS = 10_000;
// setTimeout's largest delay; shutdownTimeout (a u32) may exceed it.
const MAX_TIMER_MS = 2 ** 31 - 1;

type AnyServer = HttpServer | Http2SecureServer;

/** The address a listener binds: what reloads diff listeners by. */
export function bindingOf(spec: ListenerSpec): string {
  return `${spec.address ?? '*'} ${spec.port}`;
}

/**
 * The protocol half of a listener: a Node HTTP, HTTPS or HTTP/2 server that never binds a port
 * but is handed the connections its Listener accepts, and tracks them so it can drain on its own.
 */
export class ProtocolServer {
  private readonly server: AnyServer;
  /** Every connection handed over, as accepted (before any TLS). */
  private readonly sockets = new Set<Socket>();
  private readonly http1: Http1Connections;
  private readonly sessions: Http2Sessions;
  private readonly idleMs: number;
  private readonly headDeadlines = new WeakMap<Socket, NodeJS.Timeout>();
  private tls: TlsSetup | undefined;
  /** The certificates' contexts of an HTTPS listener. */
  private certificates: CertificateContexts | undefined;
  private drained: Promise<number> | undefined;
  private peak = 0;
  private onEmpty: (() => void) | undefined;

  constructor(
    readonly spec: ListenerSpec,
    dispatch: Dispatch,
    limits: ConnectionLimits = DEFAULT_LIMITS,
    tls?: TlsSetup,
    /** A request the HTTP parser refused, answered here: the access log records it too. */
    private readonly onRefused?: (refusal: Refusal) => void,
  ) {
    this.idleMs = limits.http2IdleMs ?? HTTP2_IDLE_MS;
    this.http1 = new Http1Connections(limits.sendTimeoutMs ?? SEND_TIMEOUT_MS);
    this.sessions = new Http2Sessions(sessionLimits(limits));
    const http1 = {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: limits.checkIntervalMs,
    };
    if (!spec.secure) {
      this.server = createServer({ ...http1, requireHostHeader: false }, (req, res) => {
        this.http1.request(req, res);
        dispatch(req, res, 'http');
      });
    } else {
      if (!tls || (!tls.certificates.fallback && !tls.certificates.managed))
        throw new ListenError(`${spec.id}: HTTPS needs a certificate (cert and key)`);
      this.tls = tls;
      const options = {
        ...http1,
        // The pipeline answers a missing Host itself, with Portico's headers and an access-log line.
        requireHostHeader: false,
        ...tls.policy,
        ...tls.certificates.fallback,
        handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
        requestCert: tls.requestCert,
        rejectUnauthorized: tls.requestCert,
        // Reads the current certificates, so a reload's new ones apply to new handshakes.
        SNICallback: (name: string, done: (err: Error | null, context?: SecureContext) => void) =>
          done(null, this.certificates?.forName(name)),
      };
      const handler = (req: Request, res: Response) => dispatch(req, res, 'https');
      if (tls.http2) {
        const h2 = http2Module().createSecureServer({
          ...options,
          allowHTTP1: true,
          settings: tls.http2Settings,
        });
        // HTTP/2 streams are answered on the core API (http2-streams.ts). Node turns its
        // compatibility layer on for every stream when a 'request' listener is added; only the
        // ALPN fallback's HTTP/1.1 requests are meant to reach this one.
        h2.removeAllListeners('newListener');
        h2.on('request', (req: IncomingMessage, res: ServerResponse) => {
          this.headWindow(req.socket, req, res, limits);
          this.http1.request(req, res);
          handler(req, res);
        });
        h2.on(
          'stream',
          http2Streams(handler, (stream) => this.sessions.opened(stream)),
        );
        // No h2.setTimeout: Node's session timer is refreshed on every write of every stream, 9 %
        // of the CPU of a small HTTP/2 response (bench/h2.sh); idle sessions are closed by the
        // liveness check instead, and the fallback's sockets get the timeout below.
        // HTTP/1.1 clients of this listener (the ALPN fallback) are served by Node's HTTP/2 server,
        // which applies none of the HTTP/1 header, body and keep-alive limits: a slow client would
        // hold its connection for ever. The same limits as the plain listener's are kept here: a
        // complete head within the header limit of connecting, the whole request within the request
        // limit of its head, the next head within the keep-alive limit of each response's end.
        h2.on('secureConnection', (socket: TLSSocket) => {
          if (socket.alpnProtocol === 'h2') return;
          // Node's HTTP/1 connection handling destroys a socket whose timeout passes.
          socket.setTimeout(this.idleMs);
          this.http1.add(socket);
          this.armHeadDeadline(socket, limits.headersTimeoutMs);
        });
        // Node creates each session in its own secureConnection listener and announces it at once:
        // one that runs first learns which socket the session will be on.
        let connecting: TLSSocket | undefined;
        h2.prependListener('secureConnection', (socket: TLSSocket) => (connecting = socket));
        h2.on('session', (session: ServerHttp2Session) => {
          this.sessions.add(session, connecting);
          // A session whose handshake finished after draining began gets GOAWAY at once.
          if (this.drained) session.close();
          connecting = undefined;
        });
        this.server = h2;
      } else {
        this.server = httpsModule().createServer(options, (req, res) => {
          this.http1.request(req, res);
          handler(req, res);
        });
        this.server.on('secureConnection', (socket: TLSSocket) => this.http1.add(socket));
      }
      // Failed handshakes (a client without a certificate, a scanner) end the connection only;
      // plain HTTP sent to this port is told so in plain HTTP, as nginx does.
      this.server.on('tlsClientError', (err: NodeJS.ErrnoException, socket: TLSSocket) => {
        const raw = (socket as TLSSocket & { _parent?: Socket })._parent;
        if (err.code !== 'ERR_SSL_HTTP_REQUEST' || raw === undefined || !raw.writable)
          return void socket.destroy();
        endRefused(raw, PLAIN_HTTP_TO_HTTPS);
        this.onRefused?.({
          address: normalizeAddress(raw.remoteAddress ?? ''),
          status: 400,
          line: undefined,
          protocol: 'HTTP/1.1',
        });
      });
      // Always listening, so a reload can switch stapling on or off for new handshakes.
      this.server.on(
        'OCSPRequest',
        (
          certificate: Buffer,
          issuer: Buffer | null,
          done: (err: Error | null, response?: Buffer) => void,
        ) => {
          const staple = this.tls?.onOcspRequest;
          if (staple) staple(certificate, issuer, done);
          else done(null);
        },
      );
      this.certificates = new CertificateContexts(
        this.server as unknown as TlsServer,
        HANDSHAKE_TIMEOUT_MS,
      );
      this.certificates.use(tls);
    }
    const scheme = spec.secure ? 'https' : 'http';
    // An HTTP/1 CONNECT goes through the pipeline like any request (it answers 501 while no
    // module tunnels), with a response made here for its bare socket, the last on that connection.
    // HTTP/2's CONNECT is a stream like any other (http2-streams.ts).
    this.server.on('connect', (req: IncomingMessage, socket: Socket) =>
      dispatch(req, bareResponse(req, socket), scheme),
    );
    this.server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
      // Nothing reads the socket until a module takes it over; what the client sent after its
      // head is put back first, so the new protocol's first bytes are not lost.
      socket.pause();
      if (head.length > 0) socket.unshift(head);
      dispatch(req, bareResponse(req, socket), scheme, socket);
    });
    // A client that sends garbage gets a 400 and is closed; nothing reaches the log as a crash.
    this.server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
      if (err.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
      const line = firstLine((err as NodeJS.ErrnoException & { rawPacket?: Buffer }).rawPacket);
      const status =
        err.code === 'HPE_HEADER_OVERFLOW'
          ? line !== undefined && line.length >= MAX_LOGGED_LINE
            ? 414
            : 431
          : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
            ? 408
            : 400;
      const answer = `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Length: 0\r\nServer: Portico\r\n\r\n`;
      const latest = this.http1.latest(socket);
      const answering = latest !== undefined && !latest.writableFinished;
      if (latest?.req.complete && !latest.shouldKeepAlive) {
        // That answer closes the connection (Node ends it once the answer is out): nothing follows.
      } else if (latest?.req.complete && answering) {
        // The refused request was pipelined behind one still being answered: its refusal follows
        // that answer, never cuts into it.
        latest.once('finish', () => socket.writable && endRefused(socket, answer));
      } else if (answering && latest.headersSent) {
        // The request being answered is the one refused (its body broke off): its answer is cut.
        return void socket.destroy();
      } else endRefused(socket, answer);
      this.onRefused?.({
        address: normalizeAddress(socket.remoteAddress ?? ''),
        status,
        line,
        protocol: 'HTTP/1.1',
      });
    });
    // Node cuts a request's fields at its own count (a thousand or so) without a word, so a backend
    // would see part of them; the header size limit bounds the count, and the pipeline refuses a
    // request with too many (431).
    (this.server as { maxHeadersCount: number | null }).maxHeadersCount = 0;
    // Node starts the HTTP/1 header and request time limits when a server starts listening; this
    // one never listens itself, so it is told it does.
    this.server.emit('listening');
  }

  /** A connection the Listener accepted. */
  accept(socket: Socket): void {
    this.sockets.add(socket);
    if (this.sockets.size > this.peak) this.peak = this.sockets.size;
    socket.once('close', () => {
      this.sockets.delete(socket);
      if (this.sockets.size === 0) this.onEmpty?.();
    });
    if (this.certificates) return this.certificates.accept(socket);
    this.http1.add(socket);
    this.server.emit('connection', socket);
  }

  get connections(): number {
    return this.sockets.size;
  }

  /** The most connections open at once since the last call. */
  takePeak(): number {
    const peak = this.peak;
    this.peak = this.sockets.size;
    return peak;
  }

  /**
   * A reload's send timeout and HTTP/2 session limits, for open connections too. The HTTP/1 header,
   * request and keep-alive limits stay those the server was made with.
   */
  updateLimits(limits: ConnectionLimits): void {
    this.http1.setSendTimeout(limits.sendTimeoutMs ?? SEND_TIMEOUT_MS);
    this.sessions.setLimits(sessionLimits(limits));
  }

  /** New certificates and policy for new handshakes (reload); open connections are not touched. */
  updateTls(tls: TlsSetup): void {
    if (!this.spec.secure || (!tls.certificates.fallback && !tls.certificates.managed)) return;
    this.tls = tls;
    this.certificates?.use(tls);
    if (tls.http2 && 'updateSettings' in this.server)
      (this.server as Http2SecureServer).updateSettings(tls.http2Settings ?? {});
  }

  /**
   * Ends this server's connections once no longer handed new ones: idle keep-alive connections
   * close at once and busy ones as their response ends (HTTP/2 sessions get GOAWAY); whatever is
   * left after `graceMs` is destroyed. Settles, with how many connections the deadline cut, when
   * every connection has closed.
   */
  drain(graceMs: number): Promise<number> {
    this.drained ??= new Promise<number>((resolve) => {
      const stopSweeping = this.http1.drain();
      this.sessions.closeAll();
      let cut = 0;
      const deadline = setTimeout(
        () => {
          cut = this.sockets.size;
          this.http1.destroyAll();
          this.sessions.destroyAll();
          for (const socket of this.sockets) socket.destroy();
        },
        Math.min(graceMs, MAX_TIMER_MS),
      );
      this.onEmpty = () => {
        this.onEmpty = undefined;
        stopSweeping();
        clearTimeout(deadline);
        this.sessions.stop();
        this.http1.stop();
        // Stops Node's time-limit timer.
        this.server.close();
        resolve(cut);
      };
      if (this.sockets.size === 0) this.onEmpty();
    });
    return this.drained;
  }

  private armHeadDeadline(socket: Socket, ms: number): void {
    const previous = this.headDeadlines.get(socket);
    // One close listener per connection, however many requests it carries.
    if (previous === undefined)
      socket.once('close', () => clearTimeout(this.headDeadlines.get(socket)));
    clearTimeout(previous);
    this.headDeadlines.set(socket, setTimeout(() => socket.destroy(), ms).unref());
  }

  /**
   * A request head arrived on the HTTP/1.1 fallback: its body must be in within the request limit
   * (Node's requestTimeout, counted here from the head); after the response, the next head within
   * the keep-alive limit.
   */
  private headWindow(
    socket: Socket,
    req: IncomingMessage,
    res: ServerResponse,
    limits: ConnectionLimits,
  ): void {
    clearTimeout(this.headDeadlines.get(socket));
    const bodyDeadline = setTimeout(() => {
      if (!req.complete) socket.destroy();
    }, limits.requestTimeoutMs).unref();
    res.once('finish', () => {
      clearTimeout(bodyDeadline);
      if (!socket.destroyed) this.armHeadDeadline(socket, limits.keepAliveTimeoutMs);
    });
    res.once('close', () => clearTimeout(bodyDeadline));
  }
}

/** A bound address and the protocol server it hands connections to. */
export class Listener {
  private readonly server: NetServer;
  /** Protocol servers a reload replaced, finishing their connections. */
  private readonly retired = new Set<ProtocolServer>();

  constructor(
    private protocol: ProtocolServer,
    options: {
      /** Connections beyond this are refused at accept (unbounded if not given). */
      readonly maxConnections?: number;
      /** Where an accept failure (out of file descriptors) is reported; the listener goes on. */
      readonly log?: (message: string) => void;
    } = {},
  ) {
    this.server = createNetServer({ noDelay: true }, (socket) => this.protocol.accept(socket));
    if (options.maxConnections !== undefined) this.server.maxConnections = options.maxConnections;
    this.onAcceptError = (err) =>
      options.log?.(`${this.spec.id}: cannot accept a connection: ${err.message}`);
  }

  private readonly onAcceptError: (err: Error) => void;

  get spec(): ListenerSpec {
    return this.protocol.spec;
  }

  get connections(): number {
    let n = this.protocol.connections;
    for (const p of this.retired) n += p.connections;
    return n;
  }

  /** The most connections open at once since the last call (protocol servers summed). */
  takePeak(): number {
    let n = this.protocol.takePeak();
    for (const p of this.retired) n += p.takePeak();
    return n;
  }

  /** The bound port (useful when a test asked for an ephemeral one). */
  get port(): number {
    const address = this.server.address();
    return typeof address === 'object' && address ? address.port : this.spec.port;
  }

  /** What it serves, as a URL with the bound port (`http://127.0.0.1:8080`). */
  get url(): string {
    return this.spec.id.replace(/:\d+$/, `:${this.port}`);
  }

  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      const onError = (err: NodeJS.ErrnoException) => {
        this.server.off('listening', onListening);
        void this.protocol.drain(0);
        reject(new ListenError(`cannot listen on ${this.spec.id}: ${explain(err)}`));
      };
      const onListening = () => {
        this.server.off('error', onError);
        // Once listening, an error is a failed accept (EMFILE): libuv keeps accepting.
        this.server.on('error', this.onAcceptError);
        resolve();
      };
      this.server.once('error', onError);
      this.server.once('listening', onListening);
      this.server.listen({ port: this.spec.port, host: this.spec.address, ipv6Only: false });
    });
  }

  updateTls(tls: TlsSetup): void {
    this.protocol.updateTls(tls);
  }

  /** A reload's connection limits: the cap at accept, and the protocol server's time limits. */
  updateLimits(limits: ConnectionLimits, maxConnections: number): void {
    this.server.maxConnections = maxConnections;
    this.protocol.updateLimits(limits);
  }

  /** From now on connections go to `next`; the current protocol server drains within `graceMs`. */
  async replace(next: ProtocolServer, graceMs: number): Promise<void> {
    const previous = this.protocol;
    this.protocol = next;
    this.retired.add(previous);
    await previous.drain(graceMs);
    this.retired.delete(previous);
  }

  /**
   * Stops accepting, waits up to `graceMs` for in-flight requests, then closes what is left.
   * Resolves with the number of connections closed that way.
   */
  async close(graceMs: number): Promise<number> {
    if (!this.server.listening) return 0;
    this.server.close();
    const cut = await Promise.all([this.protocol, ...this.retired].map((p) => p.drain(graceMs)));
    return cut.reduce((a, b) => a + b, 0);
  }
}

/**
 * Answers a refused connection and closes it. The client gets a moment to read the answer and close
 * its end (closing at once with its bytes unread would reset the connection and could lose the
 * answer), but not for ever: one that keeps its end open is cut after LINGER_MS.
 */
function endRefused(socket: Socket, answer: string): void {
  socket.end(answer);
  const timer = setTimeout(() => socket.destroy(), LINGER_MS).unref();
  socket.once('close', () => clearTimeout(timer));
}

function sessionLimits(limits: ConnectionLimits): SessionLimits {
  return {
    livenessMs: limits.http2LivenessMs ?? HTTP2_LIVENESS_MS,
    idleMs: limits.http2IdleMs ?? HTTP2_IDLE_MS,
    sendTimeoutMs: limits.sendTimeoutMs ?? SEND_TIMEOUT_MS,
  };
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

/**
 * A response on a socket Node's HTTP/1 parser has let go of (CONNECT, an Upgrade request): the last
 * on that connection. Node has taken its time limits and its error listener off the socket too: a
 * reset while the answer is written would be an uncaught error, and a client that never reads it
 * would keep the socket for ever. Both are settled here; a 101 lifts the time limit.
 */
function bareResponse(req: IncomingMessage, socket: Socket): ServerResponse {
  socket.on('error', () => socket.destroy());
  socket.setTimeout(BARE_ANSWER_MS, () => socket.destroy());
  const res = new ServerResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(socket);
  res.once('finish', () => socket.destroySoon());
  return res;
}
