// Which certificate an HTTPS connection starts with. Node's SNICallback cannot choose alone: it
// adds the chosen certificate beside the default context's, and OpenSSL then prefers an ECDSA
// default over an RSA certificate for the name asked for. So each connection's ClientHello is read
// first and the connection starts with the named certificate's context; the callback stays for a
// hello that could not be read (one larger than a record). A hello that offers only `acme-tls/1`
// for a name being validated gets automatic TLS's validation certificate instead, and plain HTTP
// sent to the port is told to use HTTPS (as OpenSSL recognises it: a first record that begins as a
// GET, POST, HEAD or PUT request).
import type { Socket } from 'node:net';
import type { SecureContext, Server as TlsServer } from 'node:tls';
import {
  contextSwapWorks,
  defaultContext,
  handOverWith,
  serverMadeContext,
} from '../http/node-internals.js';
import type { TlsSetup } from '../plan/compile.js';
import type { KeyPair } from '../tls/certificates.js';
import { readClientHello } from '../tls/client-hello.js';
import { tlsModule } from '../tls/lazy-modules.js';

const ACME_TLS = 'acme-tls/1';
// A TLS record begins with its content type: a ClientHello's is a handshake's.
const HANDSHAKE = 0x16;
// OpenSSL reads a record's five-byte header before it tells plain HTTP from a broken record.
const RECORD_HEADER = 5;
const PLAIN_HTTP = /^(?:GET |POST |HEAD |PUT )/;

export class CertificateContexts {
  /** Per certificate; automatic TLS's come and go, so they are made on first use and kept weakly. */
  private contexts = new WeakMap<KeyPair, SecureContext>();
  private tls: TlsSetup | undefined;
  /**
   * Whether a connection can start from a context of its own (node-internals.ts). Without it the
   * server's default is made anew for a connection that names another certificate than the last.
   */
  private readonly swap = contextSwapWorks(tlsModule());
  /** The certificate the server's default context was made from last. */
  private current: KeyPair | undefined;

  constructor(
    private readonly server: TlsServer,
    private readonly helloTimeoutMs: number,
    /** Plain HTTP arrived instead of a ClientHello: it is answered on the client's socket. */
    private readonly onPlainHttp: (socket: Socket) => void,
  ) {}

  /**
   * One context per certificate, each made by the server itself so that it carries the server's
   * session id context and ticket keys (resumption with client certificates needs both). The
   * fallback's is made last and stays the server's default.
   */
  use(tls: TlsSetup): void {
    const fallback = tls.certificates.fallback;
    this.tls = tls;
    this.contexts = new WeakMap();
    if (this.swap)
      for (const pair of tls.certificates.pairs) if (pair !== fallback) this.contextOf(pair);
    // Without a fallback (automatic TLS), a client that names nothing known gets no certificate.
    this.server.setSecureContext({ ...tls.policy, ...fallback });
    this.current = fallback;
    if (fallback && this.swap) this.contexts.set(fallback, defaultContext(this.server));
  }

  /** The context for a server name (SNICallback). */
  forName(name: string): SecureContext | undefined {
    const pair = this.tls?.certificates.select(serverName(name));
    return pair && this.contextOf(pair);
  }

  private contextOf(pair: KeyPair): SecureContext {
    const known = this.contexts.get(pair);
    if (known) return known;
    const options = { ...this.tls!.policy, ...pair };
    const context = this.swap
      ? serverMadeContext(this.server, options)
      : tlsModule().createSecureContext(options);
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
      if (buffered[0] !== HANDSHAKE && buffered.length < RECORD_HEADER) return;
      stop();
      if (buffered[0] !== HANDSHAKE && PLAIN_HTTP.test(buffered.toString('latin1', 0, 5))) {
        // What else it sends is read and dropped until the answer's linger ends.
        socket.on('error', onError);
        return this.onPlainHttp(socket);
      }
      socket.pause();
      socket.unshift(buffered);
      const challenge =
        hello.name !== undefined && hello.alpn?.includes(ACME_TLS)
          ? this.tls?.acmeChallenge?.(serverName(hello.name))
          : undefined;
      if (challenge) return answerChallenge(socket, challenge, this.helloTimeoutMs);
      this.handOver(socket, hello.name);
    };
    socket.on('data', onData);
    socket.on('error', onError);
    socket.once('close', stop);
  }

  /** The server's connection listener builds the TLS socket at once, from the context set here. */
  private handOver(socket: Socket, name: string | undefined): void {
    const pair = name === undefined ? undefined : this.tls?.certificates.select(serverName(name));
    if (this.swap) {
      if (pair === undefined) this.server.emit('connection', socket);
      else handOverWith(this.server, socket, this.contextOf(pair));
      return;
    }
    const wanted = pair ?? this.tls?.certificates.fallback;
    if (wanted !== this.current) {
      this.server.setSecureContext({ ...this.tls?.policy, ...wanted });
      this.current = wanted;
    }
    this.server.emit('connection', socket);
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
  const tls = tlsModule();
  const secure = new tls.TLSSocket(socket, {
    isServer: true,
    secureContext: tls.createSecureContext({ ...pair, minVersion: 'TLSv1.2' }),
    ALPNProtocols: [ACME_TLS],
  });
  const timer = setTimeout(() => secure.destroy(), timeoutMs);
  secure.on('secure', () => secure.end());
  secure.on('error', () => secure.destroy());
  secure.on('close', () => clearTimeout(timer));
}
