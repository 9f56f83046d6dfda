// One listening socket (a TCP address or a Unix socket), and the protocol server its connections
// are handed to (protocol-server.ts). The socket and the protocol are separate so a reload that
// changes the protocol (HTTP/2, client certificates, h2c or PROXY headers switched) keeps the
// port bound: new connections go to the new protocol server while the old one drains its own. A
// listener stops gracefully: stop accepting, let in-flight requests finish within a bound, then
// close the rest.
import cluster from 'node:cluster';
import type { Settings as Http2Settings } from 'node:http2';
import { createServer as createNetServer, type Server as NetServer } from 'node:net';
import type { TlsSetup } from '../plan/compile.js';
import { listenerId, type ListenerSpec } from '../plan/listener-spec.js';
import { cannotListen, ListenError } from './listen-errors.js';
import type { ConnectionLimits, ProtocolServer } from './protocol-server.js';
import { applySocketMode, reclaimStaleSocket } from './unix-socket.js';
import { addTraffic, type Traffic } from './traffic.js';

/** The address a listener binds: what reloads diff listeners by. */
export function bindingOf(spec: ListenerSpec): string {
  if (spec.path !== undefined) return `unix:${spec.path}`;
  return `${spec.address ?? '*'} ${spec.port}${spec.ipv6Only ? ' ipv6-only' : ''}`;
}

/** A bound address and the protocol server it hands connections to. */
export class Listener {
  private readonly server: NetServer;
  /** Protocol servers a reload replaced, finishing their connections. */
  private readonly retired = new Set<ProtocolServer>();
  /** What the connections of protocol servers that finished carried. */
  private readonly finished: Traffic = { received: 0, sent: 0 };

  constructor(
    private protocol: ProtocolServer,
    options: {
      /** Connections beyond this are refused at accept (unbounded if not given). */
      readonly maxConnections?: number;
      /** Where an accept failure (out of file descriptors) is reported; the listener goes on. */
      readonly log?: (message: string) => void;
      /** A Unix socket's permissions (`socketMode`), applied once bound. */
      readonly socketMode?: string;
    } = {},
  ) {
    this.socketMode = options.socketMode;
    this.server = createNetServer({ noDelay: true }, (socket) => this.protocol.accept(socket));
    if (options.maxConnections !== undefined) this.server.maxConnections = options.maxConnections;
    this.onAcceptError = (err) =>
      options.log?.(`${this.spec.id}: cannot accept a connection: ${err.message}`);
  }

  private readonly onAcceptError: (err: Error) => void;
  private socketMode: string | undefined;

  get spec(): ListenerSpec {
    return this.protocol.spec;
  }

  get connections(): number {
    let n = this.protocol.connections;
    for (const p of this.retired) n += p.connections;
    return n;
  }

  /** Bytes received from and sent to clients by every protocol server it has had. */
  traffic(): Traffic {
    const total = { ...this.finished };
    for (const p of [this.protocol, ...this.retired]) addTraffic(total, p.traffic());
    return total;
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

  /** What it serves, as a URL with the bound port (`http://127.0.0.1:8080`), or its id for a Unix socket. */
  get url(): string {
    const { spec } = this;
    if (spec.path !== undefined) return spec.id;
    return `${listenerId(spec.secure, spec.address, this.port)}${spec.ipv6Only ? ' (IPv6 only)' : ''}`;
  }

  async start(): Promise<void> {
    const path = this.spec.path;
    // A worker's listen is done by its primary (node:cluster), which reclaimed the path before
    // any worker started (workers/primary.ts): a worker that looked would find its siblings' socket.
    if (path !== undefined && !cluster.isWorker) await reclaimStaleSocket(path, this.spec.id);
    await this.bind();
    if (path === undefined || this.socketMode === undefined) return;
    try {
      await applySocketMode(path, this.socketMode);
    } catch (e) {
      await this.close(0);
      throw new ListenError(`cannot set socketMode on ${path}: ${(e as Error).message}`);
    }
  }

  private bind(): Promise<void> {
    return new Promise((resolve, reject) => {
      const onError = (err: NodeJS.ErrnoException) => {
        this.server.off('listening', onListening);
        void this.protocol.drain(0);
        reject(new ListenError(`cannot listen on ${this.spec.id}: ${cannotListen(err)}`));
      };
      const onListening = () => {
        this.server.off('error', onError);
        // Once listening, an error is a failed accept (EMFILE): libuv keeps accepting.
        this.server.on('error', this.onAcceptError);
        resolve();
      };
      this.server.once('error', onError);
      this.server.once('listening', onListening);
      const { path, port, address, ipv6Only } = this.spec;
      // A socket of this process is made with its mode (the bind is synchronous), so there is no
      // moment in which others may connect; a worker's is made by its primary, chmod'ed after.
      const mode = path === undefined || cluster.isWorker ? undefined : this.socketMode;
      const umask = mode === undefined ? undefined : process.umask(0o777 & ~parseInt(mode, 8));
      try {
        this.server.listen(
          path !== undefined ? { path } : { port, host: address, ipv6Only: ipv6Only ?? false },
        );
      } finally {
        if (umask !== undefined) process.umask(umask);
      }
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

  updateHttp2(settings: Http2Settings): void {
    this.protocol.updateHttp2(settings);
  }

  /** A reload's `socketMode`, for a Unix socket kept bound; a failure is logged, not thrown. */
  async updateSocketMode(mode: string, log: (message: string) => void): Promise<void> {
    const path = this.spec.path;
    if (path === undefined || mode === this.socketMode) return;
    this.socketMode = mode;
    await applySocketMode(path, mode).catch((e: Error) =>
      log(`cannot set socketMode on ${path}: ${e.message}`),
    );
  }

  /** From now on connections go to `next`; the current protocol server drains within `graceMs`. */
  async replace(next: ProtocolServer, graceMs: number): Promise<void> {
    const previous = this.protocol;
    this.protocol = next;
    this.retired.add(previous);
    await previous.drain(graceMs);
    this.retired.delete(previous);
    addTraffic(this.finished, previous.traffic());
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
