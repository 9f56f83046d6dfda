// Graceful closing of HTTP/1 connections, which Node's server.close() leaves half done: a response
// in flight still promises keep-alive, so its client may send the next request just as the
// connection is closed under it; and a connection that never sent a request stays open until the
// grace period ends. This keeps, per connection, whether a request is being served and whether
// one ever was: once draining, every response says `Connection: close`, idle connections close,
// and never-used ones get a short window for their first request. It also keeps the send timeout:
// a connection whose output has waited without a 'drain' that long (a client that stopped reading
// mid-download) is closed, and the file or backend behind its response with it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

// A new connection gets this long to send its first request once its server is draining.
const FIRST_REQUEST_GRACE_MS = 1_000;
// How often a draining server looks for connections that have become idle.
const SWEEP_MS = 50;
// The send timeout is kept to within a quarter of itself, and at least this often.
const MAX_STALL_SWEEP_MS = 5_000;

interface ConnectionState {
  readonly acceptedAt: number;
  /** The latest response (HTTP/1 serves one request at a time per connection); none yet if undefined. */
  response: ServerResponse | undefined;
  /** Since when a sweep has seen output waiting with no 'drain' and no less of it since. */
  waitingSince: number | undefined;
  /** How much was waiting then. */
  waiting: number;
}

export class Http1Connections {
  private readonly states = new Map<Socket, ConnectionState>();
  private draining = false;
  private stallTimer: NodeJS.Timeout | undefined;

  constructor(private sendTimeoutMs: number) {}

  /** A reload's send timeout, for every connection from the next sweep on. */
  setSendTimeout(ms: number): void {
    if (ms === this.sendTimeoutMs) return;
    this.sendTimeoutMs = ms;
    clearInterval(this.stallTimer);
    this.stallTimer = undefined;
    if (this.states.size > 0) this.startSweeping();
  }

  get size(): number {
    return this.states.size;
  }

  /** An HTTP/1 connection (the TLS socket for HTTPS). */
  add(socket: Socket): void {
    const state: ConnectionState = {
      acceptedAt: Date.now(),
      response: undefined,
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
    this.stallTimer ??= setInterval(
      () => this.cutStalled(),
      Math.min(MAX_STALL_SWEEP_MS, Math.max(25, Math.floor(this.sendTimeoutMs / 4))),
    ).unref();
  }

  /** Stops the send-timeout sweep (the server is closed). */
  stop(): void {
    clearInterval(this.stallTimer);
  }

  private cutStalled(): void {
    const now = Date.now();
    for (const [socket, state] of this.states) {
      const waiting = socket.writableLength;
      if (waiting === 0) state.waitingSince = undefined;
      else if (state.waitingSince === undefined || waiting < state.waiting) {
        state.waitingSince = now;
        state.waiting = waiting;
      } else if (now - state.waitingSince >= this.sendTimeoutMs) socket.destroy();
    }
  }

  /**
   * Every HTTP/1 request of a tracked connection passes here before it is handled. It costs a
   * lookup and no listener: whether the response is done is read when draining.
   */
  request(req: IncomingMessage, res: ServerResponse): void {
    const state = this.states.get(req.socket);
    if (!state) return;
    state.response = res;
    // Once draining, each response is the last on its connection.
    if (this.draining) res.shouldKeepAlive = false;
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
    const timer = setInterval(sweep, SWEEP_MS);
    return () => clearInterval(timer);
  }

  destroyAll(): void {
    for (const socket of this.states.keys()) socket.destroy();
  }
}
