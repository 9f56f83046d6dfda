// HTTP/2 toward one backend: node:http2 client sessions, each carrying many requests as streams,
// a new one opened only when every session is full (so never more sessions than the backend's
// gate admits requests: the bound) and closed after IDLE_SESSION_MS without a stream. h2c backends are spoken to with prior
// knowledge (RFC 9113 §3.3), over TCP or a Unix socket; an HTTPS backend under `proxyHTTP2` offers
// h2 and HTTP/1.1 by ALPN, and one that chooses HTTP/1.1 is handed back (alpn-upstream.ts).
// undici 7 has h2c too, but serialises requests with a streamed body on a session (one gRPC call
// per connection at a time) and cannot send request trailers.
import type { ClientHttp2Session, Settings } from 'node:http2';
import { connect as netConnect, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { http2Module, tlsModule } from '../tls/lazy-modules.js';
import type { Backend } from './backend.js';
import { codedError, UpstreamStream } from './http2-stream.js';
import type {
  UpstreamDispatcher,
  UpstreamHandler,
  UpstreamRequest,
  PoolPolicy,
} from './transport.js';

// Streams one session carries at most, whatever larger number the backend allows (nghttp2's and
// undici's default).
const MAX_STREAMS_PER_SESSION = 100;
// Requests one session carries in its life (nginx's keepalive_requests is 1,000).
const MAX_REQUESTS_PER_SESSION = 100_000;
// A session with no stream is closed after this (undici's keep-alive default for HTTP/1.1).
const IDLE_SESSION_MS = 4000;
const SETTINGS: Settings = { enablePush: false };

/** A request waiting for its session to be ready. */
export interface Waiting {
  readonly options: UpstreamRequest;
  readonly handler: UpstreamHandler;
}

export interface Http2PoolOptions {
  /** An HTTPS backend that chose HTTP/1.1 by ALPN: takes the requests that waited for it. */
  readonly onHttp1?: (waiting: Waiting[]) => void;
}

class Session {
  /** Set once the backend's SETTINGS arrived: it speaks HTTP/2. */
  h2: ClientHttp2Session | undefined;
  /** Requests it carries or will carry once ready. */
  streams = 0;
  /** Requests it was given since it opened. */
  used = 0;
  maxStreams = MAX_STREAMS_PER_SESSION;
  waiting: Waiting[] = [];
  idle: NodeJS.Timeout | undefined;
  /** The connection before its session, to destroy if the pool closes meanwhile. */
  socket: Socket | undefined;
}

export class Http2Pool implements UpstreamDispatcher {
  private readonly sessions: Session[] = [];
  private closed = false;
  private readonly scheme: 'http' | 'https';

  constructor(
    private readonly backend: Backend,
    private readonly policy: PoolPolicy,
    private readonly options: Http2PoolOptions = {},
  ) {
    this.scheme = backend.secure ? 'https' : 'http';
  }

  dispatch(options: UpstreamRequest, handler: UpstreamHandler): boolean {
    if (this.closed) {
      handler.onError(new Error('the connection pool is closed'));
      return false;
    }
    const session = this.pick() ?? this.open();
    session.streams++;
    clearTimeout(session.idle);
    if (session.h2 === undefined) session.waiting.push({ options, handler });
    else this.start(session, options, handler);
    // Stream numbers run out (2^31): long before, the session takes no more and closes once its
    // requests end, and the next request opens another.
    if (++session.used >= MAX_REQUESTS_PER_SESSION && session.h2 !== undefined) {
      this.forget(session);
      session.h2.close();
    }
    return true;
  }

  close(): Promise<void> {
    this.closed = true;
    const closing = this.sessions.splice(0).map((session) => {
      clearTimeout(session.idle);
      this.fail(session, new Error('the connection pool is closed'));
      const h2 = session.h2;
      if (h2 === undefined) {
        session.socket?.destroy();
        return undefined;
      }
      return new Promise<void>((resolve) => h2.close(resolve));
    });
    return Promise.all(closing).then(() => undefined);
  }

  /** A session with room for one more stream (connecting ones included). */
  private pick(): Session | undefined {
    for (const session of this.sessions) if (session.streams < session.maxStreams) return session;
    return undefined;
  }

  private open(): Session {
    const session = new Session();
    this.sessions.push(session);
    const { backend, policy } = this;
    const socket: Socket = backend.secure
      ? tlsModule().connect({
          host: backend.hostname,
          port: backend.port,
          ALPNProtocols: this.options.onHttp1 ? ['h2', 'http/1.1'] : ['h2'],
          rejectUnauthorized: policy.verify,
          ...(backend.servername ? { servername: backend.servername } : {}),
        })
      : netConnect(
          backend.socketPath !== undefined
            ? { path: backend.socketPath }
            : { host: backend.hostname, port: backend.port },
        );
    session.socket = socket;
    // Until the backend's SETTINGS: connecting, the TLS handshake and its HTTP/2 preface.
    const timer = setTimeout(() => {
      socket.destroy(
        codedError(
          `no HTTP/2 connection within ${policy.connectTimeoutMs} ms`,
          'UND_ERR_CONNECT_TIMEOUT',
        ),
      );
    }, policy.connectTimeoutMs);
    let failure: Error | undefined;
    socket.on('error', (error: Error) => (failure ??= error));
    socket.once('close', () => {
      clearTimeout(timer);
      if (session.h2 === undefined) this.drop(session, failure ?? notHttp2());
    });
    socket.once(backend.secure ? 'secureConnect' : 'connect', () => {
      const alpn = (socket as TLSSocket).alpnProtocol;
      if (backend.secure && alpn !== 'h2') {
        clearTimeout(timer);
        this.handBack(session, socket, alpn);
        return;
      }
      const h2 = http2Module().connect(`${this.scheme}://${backend.authority}`, {
        createConnection: () => socket,
        settings: SETTINGS,
      });
      h2.on('error', (error: Error) => (failure ??= error));
      h2.once('remoteSettings', (settings: Settings) => {
        clearTimeout(timer);
        session.h2 = h2;
        session.socket = undefined;
        session.maxStreams = Math.max(
          1,
          Math.min(MAX_STREAMS_PER_SESSION, settings.maxConcurrentStreams ?? Infinity),
        );
        const waiting = session.waiting.splice(0);
        for (const { options, handler } of waiting) this.start(session, options, handler);
      });
      // A GOAWAY lets the streams it names finish: no new ones go to it.
      h2.once('goaway', () => this.forget(session));
      h2.once('close', () => {
        clearTimeout(timer);
        clearTimeout(session.idle);
        this.drop(session, failure ?? notHttp2());
      });
    });
    return session;
  }

  private start(session: Session, options: UpstreamRequest, handler: UpstreamHandler): void {
    new UpstreamStream(session.h2!, this.scheme, this.policy, options, handler, () =>
      this.streamClosed(session),
    );
  }

  private streamClosed(session: Session): void {
    session.streams--;
    if (session.streams > 0 || !this.sessions.includes(session)) return;
    clearTimeout(session.idle);
    session.idle = setTimeout(() => {
      if (session.streams > 0) return;
      this.forget(session);
      session.h2?.close();
    }, IDLE_SESSION_MS).unref();
  }

  /** An HTTPS backend that answered the ALPN offer with HTTP/1.1 (or nothing). */
  private handBack(session: Session, socket: Socket, alpn: string | false | null): void {
    this.forget(session);
    socket.destroy();
    const waiting = session.waiting.splice(0);
    if (this.options.onHttp1) this.options.onHttp1(waiting);
    else {
      const error = codedError(`the backend chose ${alpn || 'no protocol'}, not h2`, 'ERR_ALPN');
      for (const { handler } of waiting) handler.onError(error);
    }
  }

  /** The session is gone: whoever still waited for it fails (before their request started). */
  private drop(session: Session, error: Error): void {
    this.forget(session);
    this.fail(session, error);
  }

  private fail(session: Session, error: Error): void {
    for (const { handler } of session.waiting.splice(0)) handler.onError(error);
  }

  private forget(session: Session): void {
    const i = this.sessions.indexOf(session);
    if (i >= 0) this.sessions.splice(i, 1);
  }
}

function notHttp2(): Error {
  return new Error('the backend closed the connection before its HTTP/2 SETTINGS');
}
