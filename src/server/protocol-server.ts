// The protocol half of a listener: the Node server (HTTP/1.1 with HTTP/2 by prior knowledge beside
// it: h2c-server.ts, or over TLS HTTPS with HTTP/2 negotiated by ALPN and HTTP/1.1 the fallback:
// secure-server.ts) that its Listener hands each accepted connection to, after what the connection
// sends first is read where the configuration asks (a PROXY header, HTTP/2's preface:
// connection-preamble.ts). It tracks its connections so that it can drain on its own when a reload
// replaces it, and takes a reload's certificates, policy and limits in place.
import {
  createServer,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
} from 'node:http';
import type {
  Http2SecureServer,
  Http2Server,
  ServerHttp2Session,
  Settings as Http2Settings,
} from 'node:http2';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Server as TlsServer } from 'node:tls';
import type { Request, Response } from '../http/ctx.js';
import type { TlsSetup } from '../plan/compile.js';
import type { ListenerSpec } from '../plan/listener-spec.js';
import { bareResponse } from './bare-response.js';
import { CertificateContexts } from './certificate-contexts.js';
import { readPreamble } from './connection-preamble.js';
import { clientOf, speakFor, UNIX_CLIENT } from './connection-clients.js';
import { createH2cServer } from './h2c-server.js';
import type { ProxiedClient } from './proxy-header.js';
import { Http1Connections } from './http1-connections.js';
import { Http2Sessions, type SessionLimits } from './http2-sessions.js';
import { http2Streams } from './http2-streams.js';
import { refuseClient, refusePlainHttp, requestTimeout, type Refusal } from './refusals.js';
import { createSecureServer, HANDSHAKE_TIMEOUT_MS } from './secure-server.js';
import { ListenError } from './listen-errors.js';
import { addTraffic, socketTraffic, trafficOf, type Traffic } from './traffic.js';

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
  /** How often the limits above are checked. */
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

/** What a protocol server needs beyond its spec, limits and certificates. */
export interface ProtocolOptions {
  /** HTTP/2's settings for HTTP/2 with prior knowledge (a plain listener's, with enableH2C). */
  readonly http2Settings?: Http2Settings;
  /** With proxyProtocol: whether a peer may send a PROXY header (undefined: a Unix-socket peer). */
  readonly trusts?: (peer: string | undefined) => boolean;
  /** Why a connection was refused before its protocol began, for the error log. */
  readonly refusedConnection?: (reason: string) => void;
}

// The defaults of http2IdleMs and http2LivenessMs.
const HTTP2_IDLE_MS = 120_000;
const HTTP2_LIVENESS_MS = 20_000;
const SEND_TIMEOUT_MS = 60_000;
// setTimeout's largest delay; shutdownTimeout (a u32) may exceed it.
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A TCP connection's two ends: how a TLS socket is matched with the connection it was made on. */
function endsOf(socket: Socket): string {
  return `${socket.remoteAddress} ${socket.remotePort} ${socket.localAddress} ${socket.localPort}`;
}

/**
 * The protocol half of a listener: a Node HTTP, HTTPS or HTTP/2 server that never binds a port
 * but is handed the connections its Listener accepts, and tracks them so it can drain on its own.
 */
export class ProtocolServer {
  private readonly server: HttpServer | Http2SecureServer;
  /** HTTP/2 with prior knowledge beside HTTP/1.1 (a plain listener with enableH2C). */
  private readonly h2c: Http2Server | undefined;
  /**
   * The clients PROXY headers named on TLS connections still in their handshake, by the ends of
   * the connection: Node makes the TLS socket, which requests then see, out of sight.
   */
  private readonly viaTls = new Map<string, ProxiedClient>();
  private readonly headersTimeoutMs: number;
  /** Every connection handed over, as accepted (before any TLS). */
  private readonly sockets = new Set<Socket>();
  private readonly http1: Http1Connections;
  private readonly sessions: Http2Sessions;
  private tls: TlsSetup | undefined;
  /** The certificates' contexts of an HTTPS listener. */
  private certificates: CertificateContexts | undefined;
  private drained: Promise<number> | undefined;
  private peak = 0;
  /** What connections that closed received and sent. */
  private readonly closedTraffic: Traffic = { received: 0, sent: 0 };
  private onEmpty: (() => void) | undefined;

  constructor(
    readonly spec: ListenerSpec,
    dispatch: Dispatch,
    limits: ConnectionLimits = DEFAULT_LIMITS,
    tls?: TlsSetup,
    /** A request the HTTP parser refused, answered here: the access log records it too. */
    private readonly onRefused?: (refusal: Refusal) => void,
    private readonly options: ProtocolOptions = {},
  ) {
    this.headersTimeoutMs = limits.headersTimeoutMs;
    // A server that never listens gets no time limits from Node: http1-connections.ts keeps them
    // (and the HTTP/2 server's HTTP/1.1 fallback gets none from Node at all).
    this.http1 = new Http1Connections(limits, limits.sendTimeoutMs ?? SEND_TIMEOUT_MS, (socket) =>
      this.refuse(requestTimeout(), socket),
    );
    this.sessions = new Http2Sessions(sessionLimits(limits));
    // Node keeps the keep-alive limit itself; the other two it only checks against each other.
    const http1 = {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
    };
    const scheme = spec.secure ? 'https' : 'http';
    const onRequest = (req: IncomingMessage, res: ServerResponse) => {
      this.http1.request(req, res);
      dispatch(req, res, scheme);
    };
    if (!spec.secure) {
      this.server = createServer({ ...http1, requireHostHeader: false }, onRequest);
      if (spec.h2c)
        this.h2c = createH2cServer(options.http2Settings ?? {}, {
          stream: http2Streams(
            (req, res) => dispatch(req, res, scheme),
            (stream) => this.sessions.opened(stream),
          ),
          session: (session, socket) => {
            const client = clientOf(socket);
            if (client) speakFor(session.socket, client);
            this.session(session, socket);
          },
        });
    } else {
      if (!tls || (!tls.certificates.fallback && !tls.certificates.managed))
        throw new ListenError(`${spec.id}: HTTPS needs a certificate (cert and key)`);
      this.tls = tls;
      const idleMs = limits.http2IdleMs ?? HTTP2_IDLE_MS;
      this.server = createSecureServer(tls, http1, {
        request: onRequest,
        stream: http2Streams(
          (req, res) => dispatch(req, res, scheme),
          (stream) => this.sessions.opened(stream),
        ),
        http1Connection: (socket, fallback) => {
          this.speakForTls(socket, socket);
          // Node's HTTP/1 connection handling destroys a socket whose timeout passes.
          if (fallback) socket.setTimeout(idleMs);
          this.http1.add(socket, fallback);
        },
        session: (session, socket) => {
          if (socket) this.speakForTls(socket, session.socket);
          this.session(session, socket);
        },
        contextFor: (name) => this.certificates?.forName(name),
        stapling: () => this.tls?.onOcspRequest,
      });
      this.certificates = new CertificateContexts(
        this.server as unknown as TlsServer,
        HANDSHAKE_TIMEOUT_MS,
        (socket) => refusePlainHttp(socket, this.onRefused),
      );
      this.certificates.use(tls);
    }
    // An HTTP/1 CONNECT goes through the pipeline like any request (it answers 501 while no
    // module tunnels), with a response made here for its bare socket, the last on that connection.
    // HTTP/2's CONNECT is a stream like any other (http2-streams.ts).
    this.server.on('connect', (req: IncomingMessage, socket: Socket) => {
      this.http1.detach(socket);
      dispatch(req, bareResponse(req, socket), scheme);
    });
    this.server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
      this.http1.detach(socket);
      // Nothing reads the socket until a module takes it over; what the client sent after its
      // head is put back first, so the new protocol's first bytes are not lost.
      socket.pause();
      if (head.length > 0) socket.unshift(head);
      dispatch(req, bareResponse(req, socket), scheme, socket);
    });
    // A client that sends garbage gets a 400 and is closed; nothing reaches the log as a crash.
    this.server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) =>
      this.refuse(err, socket),
    );
    // Node cuts a request's fields at its own count (a thousand or so) without a word, so a backend
    // would see part of them; the header size limit bounds the count, and the pipeline refuses a
    // request with too many (431).
    (this.server as { maxHeadersCount: number | null }).maxHeadersCount = 0;
  }

  private refuse(err: NodeJS.ErrnoException, socket: Socket): void {
    refuseClient(err, socket, this.http1.latest(socket), this.onRefused);
  }

  private session(session: ServerHttp2Session, socket: Socket | undefined): void {
    this.sessions.add(session, socket);
    // A session whose handshake finished after draining began gets GOAWAY at once.
    if (this.drained) session.close();
  }

  /** The TLS socket of a connection, and what requests see as theirs, speak for its client. */
  private speakForTls(socket: Socket, seen: object): void {
    const client = this.spec.path !== undefined ? UNIX_CLIENT : this.viaTls.get(endsOf(socket));
    if (client) speakFor(seen, client);
  }

  /** A connection the Listener accepted. */
  accept(socket: Socket): void {
    this.sockets.add(socket);
    if (this.sockets.size > this.peak) this.peak = this.sockets.size;
    socket.once('close', () => {
      addTraffic(this.closedTraffic, socketTraffic(socket));
      this.sockets.delete(socket);
      if (this.sockets.size === 0) this.onEmpty?.();
    });
    if (this.spec.path !== undefined) speakFor(socket, UNIX_CLIENT);
    if (!this.spec.proxyProtocol && !this.h2c) return this.serve(socket, false);
    const acceptedAt = Date.now();
    const trusts = this.spec.proxyProtocol ? this.options.trusts : undefined;
    readPreamble(
      socket,
      {
        ...(trusts ? { trusts } : {}),
        h2c: this.h2c !== undefined,
        timeoutMs: this.headersTimeoutMs,
      },
      {
        done: ({ client, http2 }) => {
          if (client) speakFor(socket, client);
          this.serve(socket, http2, acceptedAt);
          // What the preamble read is back in the socket, which its protocol reads once resumed;
          // node:http2 reads it by itself.
          if (!http2) socket.resume();
        },
        refused: (reason) => {
          if (reason !== undefined) this.options.refusedConnection?.(`${this.spec.id}: ${reason}`);
        },
      },
    );
  }

  /** Hands a connection to its protocol; `acceptedAt` when its preamble was read first. */
  private serve(socket: Socket, http2: boolean, acceptedAt?: number): void {
    if (this.certificates) {
      const client = clientOf(socket);
      if (client && this.spec.path === undefined) {
        const ends = endsOf(socket);
        this.viaTls.set(ends, client);
        socket.once('close', () => this.viaTls.delete(ends));
      }
      return this.certificates.accept(socket);
    }
    if (http2) return void this.h2c!.emit('connection', socket);
    this.http1.add(socket, false, acceptedAt);
    this.server.emit('connection', socket);
  }

  get connections(): number {
    return this.sockets.size;
  }

  /** Bytes received from and sent to clients, closed connections and open ones alike. */
  traffic(): Traffic {
    return trafficOf(this.closedTraffic, this.sockets);
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

  /** A reload's HTTP/2 settings, for new sessions of HTTP/2 with prior knowledge. */
  updateHttp2(settings: Http2Settings): void {
    this.h2c?.updateSettings(settings);
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
        resolve(cut);
      };
      if (this.sockets.size === 0) this.onEmpty();
    });
    return this.drained;
  }
}

function sessionLimits(limits: ConnectionLimits): SessionLimits {
  return {
    livenessMs: limits.http2LivenessMs ?? HTTP2_LIVENESS_MS,
    idleMs: limits.http2IdleMs ?? HTTP2_IDLE_MS,
    sendTimeoutMs: limits.sendTimeoutMs ?? SEND_TIMEOUT_MS,
  };
}
