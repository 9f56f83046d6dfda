// FastCGI connections to one target, kept open between requests (FCGI_KEEP_CONN) as nginx's
// `fastcgi_keep_conn` with an upstream `keepalive`, and at most as many at once as the
// application serves. A php-fpm child stays with its connection until it closes, so a connection
// opened beyond the children waits in php-fpm's listen queue behind kept ones (nginx leaves it
// there: p99 of seconds in bench/fastcgi.sh). php-fpm does not say how many children it has
// (FCGI_GET_VALUES answers FCGI_MPXS_CONNS only), so the pool learns it. A request on a new
// connection unanswered for longer than requests take (twice the usual time, and STARVING_MS)
// starves: an idle or returning kept connection is closed for it, freeing a child; when that
// answers it within about the time scripts take, the application was full, and the limit becomes
// the most connections it answered on at once. Beyond the limit, requests wait here in order; now
// and then one goes over it as a probe, and the limit grows when a probe is answered (more
// children, a restart, pm dynamic). Shared by every Plan that names the target. A worker process
// keeps no connection (pool-share.ts says why): each request connects, and the rest is the same.
import type { Socket } from 'node:net';
import { connectWithin, type SocketAddress } from '../../gateway/socket-address.js';
import { HttpError } from '../../http/http-error.js';
import { poolShare, type PoolShare } from './pool-share.js';

/** How long a request waits for a connection before it gets 503. */
export const WAIT_MS = 30_000;
/** How long a request on a new connection may go unanswered, beyond the usual, before it starves. */
export const STARVING_MS = 20;
/** The longest interval between two closes for a request still unanswered on a new connection. */
const MAX_WATCH_MS = 1_000;
/** How often a waiting request may go over the learned limit to find more capacity. */
export const PROBE_MS = 1_000;
/** The one buffer every connection reads into (one thread reads, and what is kept is copied). */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

/** The exchange a connection is lent to: what comes from the application goes to it. */
export interface ConnectionUser {
  data(chunk: Buffer): void;
  failed(error: Error): void;
  closed(): void;
}

/** One connection, lent to one exchange at a time. */
export class FcgiConnection {
  /** The exchange it is lent to; none while idle, when anything from the application ends it. */
  user: ConnectionUser | undefined;
  /** Answered at least once: a child of the application serves it. */
  served = false;
  /** Lent from the idle list: the application may have closed it meanwhile. */
  reused = false;
  /** Closed or closing: no longer counted. */
  gone = false;
  /** When its request was sent in full, while it waits for its first answer (else 0). */
  sentAt = 0;
  /** When a kept connection was last closed to free a child for it (0: never). */
  rescuedAt = 0;
  watch: NodeJS.Timeout | undefined;

  constructor(
    readonly socket: Socket,
    private readonly pool: FcgiConnections,
  ) {}

  /** Kept open for the next request (FCGI_KEEP_CONN), or closed after this one. */
  get kept(): boolean {
    return this.pool.share.keep;
  }

  /**
   * The request is sent in full and not answered yet: from now until answered(), on a new
   * connection, it may sit in the listen queue.
   */
  sent(): void {
    this.sentAt = Date.now();
    if (!this.served) this.pool.watchNew(this);
  }

  /** Something of the answer came (called for every read). */
  answered(): void {
    if (this.sentAt !== 0) {
      this.pool.took(Date.now() - this.sentAt);
      this.sentAt = 0;
    }
    if (!this.served) this.pool.firstAnswer(this);
  }

  /** The exchange is over; the connection is kept for the next one, or closed. */
  end(how: ExchangeEnd): void {
    this.pool.end(this, how);
  }
}

/** How an exchange left its connection. */
export interface ExchangeEnd {
  /** Fit for another request (the application kept it, and nothing of this one is left on it). */
  readonly keep: boolean;
}

/** A request asking for a connection. */
export interface Borrower {
  /** A new connection, never an idle one (a retry after a stale one). */
  readonly fresh: boolean;
  /** The request's client: one that left while it waited is not given a connection. */
  readonly client: { readonly clientGone: boolean } | undefined;
}

interface Waiter extends Borrower {
  readonly since: number;
  readonly resolve: (connection: FcgiConnection) => void;
  readonly reject: (error: unknown) => void;
}

export class FcgiConnections {
  /** Most recently used last. */
  private readonly idle: FcgiConnection[] = [];
  private readonly waiting: Waiter[] = [];
  /** New connections whose request is sent and not answered yet. */
  private readonly unanswered = new Set<FcgiConnection>();
  /** Connections lent or being opened. */
  private busy = 0;
  /** Open connections the application has answered on. */
  private servedOpen = 0;
  /** The most there were since there were none (the application restarted, or had not begun). */
  private peakServed = 0;
  private limit: number;
  private lastProbe = 0;
  private closed = false;
  /** How long requests take to be answered, a moving average in ms (0: none seen yet). */
  private answerMs = 0;
  /** Set while requests wait: fires when the first in line has waited WAIT_MS. */
  private expiry: NodeJS.Timeout | undefined;

  /**
   * `connectMs`: how long a new connection may take (proxyConnectTimeout); `share`: this process's
   * part of the server's (one of several workers).
   */
  constructor(
    readonly address: SocketAddress,
    private readonly connectMs: number,
    readonly share: PoolShare = poolShare(1),
  ) {
    this.limit = share.connections;
  }

  /**
   * A connection for one exchange: an idle one, or a new one (always new when `fresh`, a retry),
   * once fewer than the limit are lent. A waiting request whose client left is not given one.
   */
  acquire(borrower: Borrower): FcgiConnection | Promise<FcgiConnection> {
    if (this.waiting.length === 0 && this.mayLend()) return this.lend(borrower);
    if (this.waiting.length >= this.share.waiting)
      return Promise.reject(this.busyError(`${this.share.waiting} requests wait already`));
    const turn = new Promise<FcgiConnection>((resolve, reject) =>
      this.waiting.push({
        fresh: borrower.fresh,
        client: borrower.client,
        since: Date.now(),
        resolve,
        reject,
      }),
    );
    this.expiry ??= setTimeout(() => this.expire(), WAIT_MS).unref();
    // The first in line may go over the limit as a probe.
    this.pump();
    return turn;
  }

  close(): void {
    this.closed = true;
    for (const connection of this.idle.splice(0)) this.discard(connection);
  }

  /** @internal FcgiConnection.sent */
  watchNew(connection: FcgiConnection): void {
    this.unanswered.add(connection);
    this.watch(connection, this.rescueMs());
  }

  /**
   * Until it is answered, an idle connection is closed for it now and then, freeing the child
   * that kept it: first once it is late (rescueMs), then at twice the interval each time (closing
   * for a script that is only slow is wasted), and never a request left waiting for ever.
   */
  private watch(connection: FcgiConnection, ms: number): void {
    connection.watch = setTimeout(() => {
      // A close made for it has the time a script takes to work before another is made.
      const now = Date.now();
      if (now - connection.rescuedAt >= this.rescueMs() && this.idle.length > 0) {
        connection.rescuedAt = now;
        this.discard(this.idle.shift()!);
      }
      this.watch(connection, Math.min(ms * 2, MAX_WATCH_MS));
    }, ms).unref();
  }

  /**
   * How long a request may go unanswered before it is late: the time scripts take, twice over,
   * and STARVING_MS. Also how soon one is answered once a child is freed for it.
   */
  private rescueMs(): number {
    return STARVING_MS + 2 * this.answerMs;
  }

  /**
   * @internal FcgiConnection.answered: how long the application took to start answering. A
   * sample counts for at most MAX_WATCH_MS: a long-polling script must not make every starving
   * request wait for its time.
   */
  took(ms: number): void {
    const sample = Math.min(ms, MAX_WATCH_MS);
    this.answerMs = this.answerMs === 0 ? sample : this.answerMs * 0.9 + sample * 0.1;
  }

  /** @internal FcgiConnection.answered */
  firstAnswer(connection: FcgiConnection): void {
    connection.served = true;
    this.stopWatching(connection);
    if (connection.gone) return;
    this.peakServed = Math.max(this.peakServed, ++this.servedOpen);
    // Answered about as soon as a child was freed and ran the script: the application was full,
    // and serves as many at once as it ever answered on. (The count now is lower: the children
    // freed for the other starving requests are still running their scripts.) A slow script
    // that was running all along is answered later.
    if (connection.rescuedAt > 0 && Date.now() - connection.rescuedAt < this.rescueMs()) {
      this.limit = this.peakServed;
    } else if (this.servedOpen > this.limit) {
      // More are answered at once than the limit said: the application grew. Probe again soon.
      this.limit = this.servedOpen;
      this.lastProbe = 0;
      this.pump();
    }
  }

  /** @internal FcgiConnection.end */
  end(connection: FcgiConnection, { keep }: ExchangeEnd): void {
    this.busy--;
    connection.user = undefined;
    const { socket } = connection;
    if (
      keep &&
      !this.closed &&
      !socket.destroyed &&
      socket.writable &&
      this.idle.length < this.limit &&
      !this.rescue()
    ) {
      // Flowing while idle: a close or stray bytes from the application end it at once.
      socket.resume();
      this.idle.push(connection);
    } else this.discard(connection);
    this.pump();
  }

  private mayLend(): boolean {
    if (this.busy < this.limit) return true;
    if (this.busy >= this.share.connections || Date.now() - this.lastProbe < PROBE_MS) return false;
    this.lastProbe = Date.now();
    return true;
  }

  /** An idle connection at once, or a promise of a new one. */
  private lend({ fresh }: Borrower): FcgiConnection | Promise<FcgiConnection> {
    this.busy++;
    for (let c = fresh ? undefined : this.idle.pop(); c; c = this.idle.pop()) {
      if (!c.socket.destroyed && c.socket.writable) {
        c.reused = true;
        return c;
      }
    }
    return this.connect().catch((e: unknown) => {
      this.busy--;
      this.pump();
      throw e;
    });
  }

  private opened(socket: Socket): FcgiConnection {
    const connection = new FcgiConnection(socket, this);
    // Listeners for the connection's life, not per exchange: they pass events to its user.
    socket.on('error', (error) => {
      if (connection.user !== undefined) connection.user.failed(error);
      else socket.destroy();
    });
    socket.on('end', () => {
      if (connection.user === undefined) socket.destroy();
    });
    socket.once('close', () => {
      this.forget(connection);
      this.stopWatching(connection);
      const at = this.idle.indexOf(connection);
      if (at >= 0) this.idle.splice(at, 1);
      // None left, and none waiting: the application restarted (or stopped), maybe smaller.
      if (this.servedOpen === 0 && this.unanswered.size === 0) this.peakServed = 0;
      connection.user?.closed();
    });
    return connection;
  }

  /** Waiting requests get the connections the limit allows, in order. */
  private pump(): void {
    while (this.waiting.length > 0 && this.mayLend()) {
      const waiter = this.waiting.shift()!;
      if (waiter.client?.clientGone) {
        waiter.reject(Object.assign(new Error('the client went away'), { code: 'ECONNABORTED' }));
        continue;
      }
      const lent = this.lend(waiter);
      if (lent instanceof FcgiConnection) waiter.resolve(lent);
      else lent.then(waiter.resolve, waiter.reject);
    }
    // The queue's timer goes with its last request: a pending one held a stopped server's process
    // (and a reloaded-away pool) for up to WAIT_MS after its last request.
    if (this.waiting.length === 0 && this.expiry !== undefined) {
      clearTimeout(this.expiry);
      this.expiry = undefined;
    }
  }

  /** The requests that waited WAIT_MS get 503; one timer for the queue, as it is in order. */
  private expire(): void {
    this.expiry = undefined;
    const now = Date.now();
    while (this.waiting.length > 0 && now - this.waiting[0]!.since >= WAIT_MS)
      this.waiting.shift()!.reject(this.busyError(`none came free in ${WAIT_MS / 1000} s`));
    if (this.waiting.length > 0)
      this.expiry = setTimeout(
        () => this.expire(),
        WAIT_MS - (now - this.waiting[0]!.since),
      ).unref();
  }

  /** Closes a connection, counted out at once (its 'close' comes later). */
  private discard(connection: FcgiConnection): void {
    this.forget(connection);
    connection.socket.destroy();
  }

  /**
   * A connection leaves the count of served ones when the pool closes it, not when its 'close'
   * event comes: the child it freed may answer a waiting one first, and the peak would count a
   * child too many (a limit of 5 on 4 children, one request always in the listen queue).
   */
  private forget(connection: FcgiConnection): void {
    if (connection.gone) return;
    connection.gone = true;
    if (connection.served) this.servedOpen--;
  }

  private stopWatching(connection: FcgiConnection): void {
    clearTimeout(connection.watch);
    this.unanswered.delete(connection);
  }

  /**
   * Whether a request starves (unanswered for rescueMs on a new connection) and no connection was
   * closed for it yet: if so, the caller closes the one coming back, and it is marked rescued.
   * Later closes are the watch's, at growing intervals (a long-polling script is no starving one).
   */
  private rescue(): boolean {
    const now = Date.now();
    const late = this.rescueMs();
    for (const starving of this.unanswered)
      if (starving.rescuedAt === 0 && now - starving.sentAt >= late) {
        starving.rescuedAt = now;
        return true;
      }
    return false;
  }

  private busyError(why: string): HttpError {
    return new HttpError(503, 'upstream-unreachable', {
      detail: `FastCGI ${this.address.shown}: all ${this.limit} connections are busy and ${why}`,
    });
  }

  /**
   * A new connection. What it reads lands in the shared read buffer and goes straight to its
   * exchange (net's `onread`): no stream, event or buffer per read; the exchange copies what it keeps.
   */
  private async connect(): Promise<FcgiConnection> {
    let connection: FcgiConnection | undefined;
    const socket = await connectWithin(this.address, this.connectMs, {
      buffer: READ_BUFFER,
      callback: (length, buffer) => {
        const user = connection?.user;
        if (user !== undefined) user.data(buffer.subarray(0, length));
        // Anything from the application while idle (it closed, or misbehaves) ends it.
        else socket.destroy();
        return true;
      },
    });
    return (connection = this.opened(socket));
  }
}
