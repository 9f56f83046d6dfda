// The Node server of a secure listener: HTTP/2 negotiated by ALPN with HTTP/1.1 its fallback, or
// HTTPS alone. Like every protocol server it never binds a port: its connections are handed to it
// (certificate-contexts.ts chooses each one's certificate first). HTTP/2 streams are answered on
// node:http2's core API (http2-streams.ts).
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import type {
  Http2SecureServer,
  IncomingHttpHeaders,
  ServerHttp2Session,
  ServerHttp2Stream,
} from 'node:http2';
import type { SecureContext, TLSSocket } from 'node:tls';
import type { TlsSetup } from '../plan/compile.js';
import { http2Module, httpsModule } from '../tls/lazy-modules.js';

// A TLS client must finish its handshake within this.
export const HANDSHAKE_TIMEOUT_MS = 10_000;

/** Node's HTTP/1 server options a listener sets. */
export interface Http1Options {
  readonly headersTimeout: number;
  readonly requestTimeout: number;
  readonly keepAliveTimeout: number;
}

export interface SecureServerHooks {
  /** An HTTP/1.1 request: over HTTPS, or the HTTP/2 server's fallback. */
  readonly request: (req: IncomingMessage, res: ServerResponse) => void;
  readonly stream: (
    stream: ServerHttp2Stream,
    headers: IncomingHttpHeaders,
    flags: number,
    rawHeaders: string[],
  ) => void;
  /** An HTTP/1.1 connection whose handshake is done; `fallback`: the HTTP/2 server's. */
  readonly http1Connection: (socket: TLSSocket, fallback: boolean) => void;
  /** An HTTP/2 session, and the socket it is on. */
  readonly session: (session: ServerHttp2Session, socket: TLSSocket | undefined) => void;
  /** The context for a name that reading the ClientHello could not give (SNICallback). */
  readonly contextFor: (name: string) => SecureContext | undefined;
  /** The OCSP stapling of the current configuration, if any (a reload may switch it). */
  readonly stapling: () => TlsSetup['onOcspRequest'];
}

export function createSecureServer(
  tls: TlsSetup,
  http1: Http1Options,
  hooks: SecureServerHooks,
): HttpServer | Http2SecureServer {
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
      done(null, hooks.contextFor(name)),
  };
  let server: HttpServer | Http2SecureServer;
  if (tls.http2) {
    server = http2Server(
      http2Module().createSecureServer({
        ...options,
        allowHTTP1: true,
        settings: tls.http2Settings,
      }),
      hooks,
    );
  } else {
    server = httpsModule().createServer(options, hooks.request);
    server.on('secureConnection', (socket: TLSSocket) => hooks.http1Connection(socket, false));
  }
  // Failed handshakes (a client without a certificate, a scanner) end the connection only.
  server.on('tlsClientError', (_err: Error, socket: TLSSocket) => socket.destroy());
  // Always listening, so a reload can switch stapling on or off for new handshakes.
  server.on(
    'OCSPRequest',
    (
      certificate: Buffer,
      issuer: Buffer | null,
      done: (err: Error | null, response?: Buffer) => void,
    ) => {
      const staple = hooks.stapling();
      if (staple) staple(certificate, issuer, done);
      else done(null);
    },
  );
  return server;
}

function http2Server(h2: Http2SecureServer, hooks: SecureServerHooks): Http2SecureServer {
  // Node turns its compatibility layer on for every stream once a 'request' listener is added (a
  // request and a response object per stream, and a dozen stream events re-wired for them): the
  // streams are answered on the core API instead. The fallback's HTTP/1.1 requests, which Node
  // emits as 'request', are taken as they are emitted, with no listener added.
  const emit = h2.emit;
  h2.emit = function (this: Http2SecureServer, event: string | symbol): boolean {
    if (event !== 'request') return Reflect.apply(emit, this, arguments) as boolean;
    hooks.request(arguments[1] as IncomingMessage, arguments[2] as ServerResponse);
    return true;
  } as typeof h2.emit;
  h2.on('stream', hooks.stream);
  // No h2.setTimeout: Node's session timer is refreshed on every write of every stream, a cost on
  // every small HTTP/2 response; idle sessions are closed by the liveness check instead
  // (http2-sessions.ts), and the fallback's sockets get their limits from http1-connections.ts.
  h2.on('secureConnection', (socket: TLSSocket) => {
    if (socket.alpnProtocol !== 'h2') hooks.http1Connection(socket, true);
  });
  // Node creates each session in its own secureConnection listener and announces it at once:
  // one that runs first learns which socket the session will be on.
  let connecting: TLSSocket | undefined;
  h2.prependListener('secureConnection', (socket: TLSSocket) => (connecting = socket));
  h2.on('session', (session: ServerHttp2Session) => {
    hooks.session(session, connecting);
    connecting = undefined;
  });
  return h2;
}
