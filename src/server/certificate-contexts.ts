// Which certificate an HTTPS connection starts with. Node's SNICallback cannot choose alone: it
// adds the chosen certificate beside the default context's, and OpenSSL then prefers an ECDSA
// default over an RSA certificate for the name asked for. So each connection's ClientHello is read
// first and the connection starts with the named certificate's context; the callback stays for a
// hello that could not be read (one larger than a record).
import type { Socket } from 'node:net';
import type { SecureContext, Server as TlsServer } from 'node:tls';
import type { TlsSetup } from '../plan/compile.js';
import type { KeyPair } from '../tls/certificates.js';
import { readClientHello } from '../tls/client-hello.js';

/** Node's tls.Server keeps the context it starts each connection with here (Node 18 to 24). */
type ServerWithContext = TlsServer & { _sharedCreds: SecureContext };

export class CertificateContexts {
  private contexts = new Map<KeyPair, SecureContext>();
  private select: (name: string) => KeyPair | undefined = () => undefined;

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
    const contexts = new Map<KeyPair, SecureContext>();
    for (const pair of [...tls.certificates.pairs.filter((p) => p !== fallback), fallback]) {
      if (pair === undefined) continue;
      server.setSecureContext({ ...tls.policy, ...pair });
      contexts.set(pair, server._sharedCreds);
    }
    this.contexts = contexts;
    this.select = (name) => tls.certificates.select(name);
  }

  /** The context for a server name (SNICallback). */
  forName(name: string): SecureContext | undefined {
    const pair = this.select(name);
    return pair && this.contexts.get(pair);
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
