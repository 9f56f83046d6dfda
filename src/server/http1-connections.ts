// The HTTP/1 connections of one protocol server, watched by one sweeping timer rather than timers
// per request. Each sweep keeps the time limits:
// - a request's head must arrive within the header limit of the connection's start, or (on a
//   kept-alive connection) of when the next request began; its body within the request limit of
//   its head. A plain listener's client is then answered 408 (as Node answers when it
//   keeps these limits itself: `late`), the HTTP/2 listener's HTTP/1.1 fallback's connection is
//   closed, and after a response the fallback's next head must come within the keep-alive limit
//   (Node's HTTP/2 server keeps none of these for it);
// - a connection whose output has waited without a 'drain' for the send timeout (a client that
//   stopped reading mid-download) is closed, and the file or backend behind its response with it.
// It also closes connections gracefully, which Node's server.close() leaves half done: a response
// in flight still promises keep-alive, so its client may send the next request just as the
// connection is closed under it; and a connection that never sent a request stays open until the
// grace period ends. Once draining, every response says `Connection: close`, idle connections
// close, and never-used ones get a short window for their first request.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** The limits of a protocol server's HTTP/1 connections (ms). */
export interface Http1Limits {
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  /** How often the three limits above are checked. */
  readonly checkIntervalMs: number;
}

// A new connection gets this long to send its first request once its server is draining.
const FIRST_REQUEST_GRACE_MS = 1_000;
// How often a draining server looks for connections that have become idle.
const DRAIN_SWEEP_MS = 50;
// The send timeout is kept to within a quarter of itself, and at least this often.
const MAX_STALL_SWEEP_MS = 5_000;

interface ConnectionState {
  readonly acceptedAt: number;
  /** The HTTP/2 listener's HTTP/1.1 fallback, rather than a plain listener's connection. */
  readonly fallback: boolean;
  /** The latest response (HTTP/1 serves one request at a time per connection); none yet if undefined. */
  response: ServerResponse | undefined;
  /** The response a sweep saw last, and when it first saw it (its request's head had come). */
  seen: ServerResponse | undefined;
  headAt: number;
  /** Since when a sweep has seen the connection between requests, and how much it had read then. */
  idleSince: number | undefined;
  idleBytes: number;
  /** When a sweep first saw bytes of the next request on a kept-alive connection. */
  nextSince: number | undefined;
  /** Its requests' time limits apply: not once one passed, nor once Node's parser let it go. */
  limited: boolean;
  /** Since when a sweep has seen output waiting with no 'drain' and no less of it since. */
  waitingSince: number | undefined;
  /** How much was waiting then. */
  waiting: number;
}

export class Http1Connections {
  private readonly states = new Map<Socket, ConnectionState>();
  private draining = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly limits: Http1Limits,
    private sendTimeoutMs: number,
    /** A plain listener's request that passed its header or request limit: the 408 is sent here. */
    private readonly late: (socket: Socket) => void,
  ) {}

  /** A reload's send timeout, for every connection from the next sweep on. */
  setSendTimeout(ms: number): void {
    if (ms === this.sendTimeoutMs) return;
    this.sendTimeoutMs = ms;
    clearInterval(this.timer);
    this.timer = undefined;
    if (this.states.size > 0) this.startSweeping();
  }

  get size(): number {
    return this.states.size;
  }

  /**
   * An HTTP/1 connection (the TLS socket for HTTPS); `acceptedAt` when what it sent first was read
   * before (a PROXY header), whose time counts toward the header limit.
   */
  add(socket: Socket, fallback = false, acceptedAt = Date.now()): void {
    const state: ConnectionState = {
      acceptedAt,
      fallback,
      response: undefined,
      seen: undefined,
      headAt: 0,
      idleSince: undefined,
      idleBytes: 0,
      nextSince: undefined,
      limited: true,
      waitingSince: undefined,
      waiting: 0,
    };
    this.states.set(socket, state);
    socket.once('close', () => this.states.delete(socket));
    socket.on('drain', () => {
      state.waitingSince = undefined;
    });
    this.startSweeping();
  }

  private startSweeping(): void {
    const stallMs = Math.min(MAX_STALL_SWEEP_MS, Math.max(25, Math.floor(this.sendTimeoutMs / 4)));
    this.timer ??= setInterval(
      () => this.sweep(),
      Math.min(stallMs, this.limits.checkIntervalMs),
    ).unref();
  }

  /** Stops the sweep (the server is closed). */
  stop(): void {
    clearInterval(this.timer);
  }

  private sweep(): void {
    const now = Date.now();
    for (const [socket, state] of this.states) {
      if (state.limited && this.passedLimit(socket, state, now)) {
        state.limited = false;
        if (state.fallback) socket.destroy();
        else this.late(socket);
      } else this.checkStalled(socket, state, now);
    }
  }

  private passedLimit(socket: Socket, state: ConnectionState, now: number): boolean {
    const { headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs } = this.limits;
    const response = state.response;
    if (response === undefined) return now - state.acceptedAt >= headersTimeoutMs;
    if (response !== state.seen) {
      // A request came since the last sweep: its head is in, counted from now.
      state.seen = response;
      state.headAt = now;
      state.idleSince = state.nextSince = undefined;
    }
    const finished = response.writableFinished;
    if (!response.req.complete && !(state.fallback && finished))
      return now - state.headAt >= requestTimeoutMs;
    if (!finished) return false;
    // Between two requests.
    if (state.idleSince === undefined) {
      state.idleSince = now;
      state.idleBytes = socket.bytesRead;
      return false;
    }
    if (state.fallback) return now - state.idleSince >= keepAliveTimeoutMs;
    // Node's keep-alive limit closes a connection that stays silent; one that has begun its next
    // request has the header limit.
    if (state.nextSince === undefined) {
      if (socket.bytesRead !== state.idleBytes) state.nextSince = now;
      return false;
    }
    return now - state.nextSince >= headersTimeoutMs;
  }

  private checkStalled(socket: Socket, state: ConnectionState, now: number): void {
    const waiting = socket.writableLength;
    if (waiting === 0) state.waitingSince = undefined;
    else if (state.waitingSince === undefined || waiting < state.waiting) {
      state.waitingSince = now;
      state.waiting = waiting;
    } else if (now - state.waitingSince >= this.sendTimeoutMs) socket.destroy();
  }

  /**
   * Every HTTP/1 request of a tracked connection passes here when its head has arrived. It costs a
   * lookup and no listener, nor a clock: when it came and whether it and its response are done is
   * read by the sweeps (so a limit is kept to within a sweep's interval, as Node keeps its own).
   */
  request(req: IncomingMessage, res: ServerResponse): void {
    const state = this.states.get(req.socket);
    if (!state) return;
    state.response = res;
    // Once draining, each response is the last on its connection.
    if (this.draining) res.shouldKeepAlive = false;
  }

  /**
   * Node's HTTP/1 parser has let go of the connection (CONNECT, Upgrade): what it carries now is
   * not requests, whose time limits no longer apply. The send timeout and draining still do.
   */
  detach(socket: Socket): void {
    const state = this.states.get(socket);
    if (state) state.limited = false;
  }

  /** The latest response on this connection (finished or not), if any. */
  latest(socket: Socket): ServerResponse | undefined {
    return this.states.get(socket)?.response;
  }

  /**
   * From now on every connection ends after its response in progress; idle ones are closed as
   * they become idle, new ones once they have had time to send a request. Returns the stop.
   */
  drain(): () => void {
    this.draining = true;
    for (const { response } of this.states.values())
      if (response && !response.headersSent) response.shouldKeepAlive = false;
    const sweep = (): void => {
      const now = Date.now();
      for (const [socket, { response, acceptedAt }] of this.states) {
        const idle =
          response === undefined
            ? now - acceptedAt >= FIRST_REQUEST_GRACE_MS
            : response.writableFinished;
        if (idle) socket.destroy();
      }
    };
    sweep();
    const timer = setInterval(sweep, DRAIN_SWEEP_MS);
    return () => clearInterval(timer);
  }

  destroyAll(): void {
    for (const socket of this.states.keys()) socket.destroy();
  }
}
