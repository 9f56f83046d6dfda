// Which certificate an HTTPS connection starts with. Node's SNICallback cannot choose alone: it
// adds the chosen certificate beside the default context's, and OpenSSL then prefers an ECDSA
// default over an RSA certificate for the name asked for. So each connection's ClientHello is read
// first and the connection starts with the named certificate's context; the callback stays for a
// hello that could not be read (one larger than a record). A hello that offers only `acme-tls/1`
// for a name being validated gets automatic TLS's validation certificate instead.
import type { Socket } from 'node:net';
import {
  createSecureContext,
  TLSSocket,
  type SecureContext,
  type Server as TlsServer,
} from 'node:tls';
import type { TlsSetup } from '../plan/compile.js';
import type { KeyPair } from '../tls/certificates.js';
import { readClientHello } from '../tls/client-hello.js';

const ACME_TLS = 'acme-tls/1';

/** Node's tls.Server keeps the context it starts each connection with here (Node 18 to 24). */
type ServerWithContext = TlsServer & { _sharedCreds: SecureContext };

export class CertificateContexts {
  /** Per certificate; automatic TLS's come and go, so they are made on first use and kept weakly. */
  private contexts = new WeakMap<KeyPair, SecureContext>();
  private tls: TlsSetup | undefined;

  constructor(
    private readonly server: TlsServer,
    private readonly helloTimeoutMs: number,
  ) {}

  /**
   * One context per certificate, each made by the server itself so that it carries the server's
   * session id context and ticket keys (resumption with client certificates needs both). The
   * fallback's is made last and stays the server's default.
   */
  use(tls: TlsSetup): void {
    const server = this.server as ServerWithContext;
    const fallback = tls.certificates.fallback;
    this.tls = tls;
    this.contexts = new WeakMap();
    for (const pair of tls.certificates.pairs) if (pair !== fallback) this.contextOf(pair);
    // Without a fallback (automatic TLS), a client that names nothing known gets no certificate.
    server.setSecureContext({ ...tls.policy, ...fallback });
    if (fallback) this.contexts.set(fallback, server._sharedCreds);
  }

  /** The context for a server name (SNICallback). */
  forName(name: string): SecureContext | undefined {
    const pair = this.tls?.certificates.select(serverName(name));
    return pair && this.contextOf(pair);
  }

  /** The server makes it (setSecureContext) and keeps its default as it was. */
  private contextOf(pair: KeyPair): SecureContext {
    const known = this.contexts.get(pair);
    if (known) return known;
    const server = this.server as ServerWithContext;
    const usual = server._sharedCreds;
    server.setSecureContext({ ...this.tls!.policy, ...pair });
    const context = server._sharedCreds;
    server._sharedCreds = usual;
    this.contexts.set(pair, context);
    return context;
  }

  /**
   * Reads the connection's ClientHello, then hands the connection to the server with the context
   * of the name it asks for. A client that sends no complete hello in time is closed.
   */
  accept(socket: Socket): void {
    let buffered: Buffer | undefined;
    const timer = setTimeout(() => socket.destroy(), this.helloTimeoutMs);
    const stop = () => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('error', onError);
      socket.off('close', stop);
    };
    const onError = () => socket.destroy();
    const onData = (chunk: Buffer) => {
      buffered = buffered === undefined ? chunk : Buffer.concat([buffered, chunk]);
      const hello = readClientHello(buffered);
      if (!hello.complete) return;
      stop();
      socket.pause();
      socket.unshift(buffered);
      const challenge =
        hello.name !== undefined && hello.alpn?.includes(ACME_TLS)
          ? this.tls?.acmeChallenge?.(serverName(hello.name))
          : undefined;
      if (challenge) return answerChallenge(socket, challenge, this.helloTimeoutMs);
      this.handOver(socket, hello.name === undefined ? undefined : this.forName(hello.name));
    };
    socket.on('data', onData);
    socket.on('error', onError);
    socket.once('close', stop);
  }

  /** The server's connection listener builds the TLS socket at once, from the context set here. */
  private handOver(socket: Socket, context: SecureContext | undefined): void {
    const server = this.server as ServerWithContext;
    const usual = server._sharedCreds;
    if (context) server._sharedCreds = context;
    try {
      server.emit('connection', socket);
    } finally {
      server._sharedCreds = usual;
    }
  }
}

/**
 * A server name as certificates are looked up by: lower case, without the one trailing dot of a
 * fully qualified name (`a.test.` is `a.test`): RFC 6066 §3 forbids the dot, but clients send it.
 */
function serverName(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/**
 * TLS-ALPN-01 (RFC 8737 §3): the CA's handshake gets the validation certificate and `acme-tls/1`,
 * then the connection ends; it never reaches HTTP.
 */
function answerChallenge(socket: Socket, pair: KeyPair, timeoutMs: number): void {
  const tls = new TLSSocket(socket, {
    isServer: true,
    secureContext: createSecureContext({ ...pair, minVersion: 'TLSv1.2' }),
    ALPNProtocols: [ACME_TLS],
  });
  const timer = setTimeout(() => tls.destroy(), timeoutMs);
  tls.on('secure', () => tls.end());
  tls.on('error', () => tls.destroy());
  tls.on('close', () => clearTimeout(timer));
}
