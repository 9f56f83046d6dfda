// The HTTP/2 sessions of one protocol server, watched by one sweeping timer rather than a timer per
// session or stream (Node's own session timer is refreshed on every write of every stream, a cost
// on every small response). Each sweep:
// - a session that has read nothing for the liveness time is pinged, and destroyed if the ping is
//   not answered within as long again: Node's session stops reading its socket while a write is
//   pending, so a client that died mid-download (or flooded PINGs without reading the answers,
//   then vanished) is never noticed otherwise;
// - a session without streams for the idle time is closed (GOAWAY);
// - a closing session left without streams that is still not closed after the liveness time is
//   destroyed: its writes are stuck, and session.close() would wait for them for ever;
// - a stream whose response has had output waiting, with no 'drain', for the send timeout is
//   reset: a client that opens its flow-control window to no one holds nothing for long;
// - a session whose streams are reset faster than a budget allows is destroyed (rapid reset, CVE-
//   2023-44487): nghttp2 answers such a flood with GOAWAY and stops reading, but nothing closes
//   the connection, and the client's own close then goes unnoticed.
import type { ServerHttp2Session, ServerHttp2Stream } from 'node:http2';
import type { Socket } from 'node:net';

export interface SessionLimits {
  readonly livenessMs: number;
  readonly idleMs: number;
  readonly sendTimeoutMs: number;
}

interface Waiting {
  /** Since when a sweep has seen output waiting with no 'drain' and no less of it since. */
  readonly since: number;
  /** How much was waiting then. */
  readonly size: number;
}

interface SessionWatch {
  /** The session's socket (TLS or plain): Node hands out only a proxy that refuses to be destroyed. */
  readonly socket: Socket | undefined;
  /** Open streams, each with how long its output has waited (undefined: nothing waits). */
  readonly streams: Map<ServerHttp2Stream, Waiting | undefined>;
  bytesRead: number;
  heardAt: number;
  pingSentAt: number | undefined;
  /** Since when a sweep has seen it without streams. */
  quietSince: number | undefined;
  /** Since when a sweep has seen it closing. */
  closingSince: number | undefined;
  /** Resets still allowed, and when that was counted. */
  resetBudget: number;
  resetAt: number;
}

// RST_STREAM's code for a stream the server gives up on (RFC 9113 §7).
const CANCEL = 0x8;
const ENHANCE_YOUR_CALM = 0xb;
// Streams reset (by either side) a session may have in a burst, and per second after it: below
// nghttp2's own (1,000, then 33 per second), so the session is cut before nghttp2 stops reading.
const RESET_BURST = 500;
const RESETS_PER_SECOND = 30;
// How long the client of a closed session has to close its side of the connection.
const CLOSE_LINGER_MS = 2_000;
// How long a session cut for its resets has to send its GOAWAY.
const GOAWAY_FLUSH_MS = 1_000;
// The reset budget of a session already cut.
const SPENT = Number.NEGATIVE_INFINITY;

// Sweeps at least this often, so a limit is kept to within a few seconds.
const MAX_SWEEP_MS = 5_000;

export class Http2Sessions {
  private readonly sessions = new Map<ServerHttp2Session, SessionWatch>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private limits: SessionLimits) {}

  /** A reload's limits, for every session from the next sweep on. */
  setLimits(limits: SessionLimits): void {
    this.limits = limits;
    clearInterval(this.timer);
    this.timer = undefined;
    if (this.sessions.size > 0) this.startSweeping();
  }

  private startSweeping(): void {
    const { livenessMs, sendTimeoutMs } = this.limits;
    const ms = Math.min(MAX_SWEEP_MS, livenessMs, Math.max(25, Math.floor(sendTimeoutMs / 4)));
    this.timer ??= setInterval(() => this.sweep(), ms).unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  add(session: ServerHttp2Session, socket: Socket | undefined): void {
    this.sessions.set(session, {
      socket,
      streams: new Map(),
      bytesRead: 0,
      heardAt: Date.now(),
      pingSentAt: undefined,
      quietSince: undefined,
      closingSince: undefined,
      resetBudget: RESET_BURST,
      resetAt: Date.now(),
    });
    session.once('close', () => this.sessions.delete(session));
    this.startSweeping();
  }

  /** Told of every stream by the server's 'stream' event: a listener on each session cost more. */
  opened(stream: ServerHttp2Stream): void {
    // Kept here: a closed stream no longer knows its session.
    const session = stream.session as ServerHttp2Session | undefined;
    const watch = session && this.sessions.get(session);
    if (watch === undefined) return;
    watch.streams.set(stream, undefined);
    // A stream closes once: no once() wrapper to make and remove. The listener returns nothing, or
    // every emit would look at what it returned for a promise to catch.
    stream.on('close', () => {
      watch.streams.delete(stream);
      // 0 (NO_ERROR) for a stream that ended as it should.
      if (stream.rstCode) spendReset(session!, watch);
    });
    stream.on('drain', this.drained);
  }

  /** Shared by every stream ('drain' comes with the stream as `this`): output moved on. */
  private readonly drained = ((sessions) =>
    function (this: ServerHttp2Stream): void {
      const watch = sessions.get(this.session as ServerHttp2Session);
      if (watch?.streams.has(this)) watch.streams.set(this, undefined);
    })(this.sessions);

  /** GOAWAY to every session: each ends once its streams have. */
  closeAll(): void {
    for (const session of this.sessions.keys()) session.close();
  }

  destroyAll(): void {
    for (const [session, watch] of this.sessions) destroy(session, watch);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private sweep(): void {
    const now = Date.now();
    const { livenessMs, idleMs, sendTimeoutMs } = this.limits;
    for (const [session, watch] of this.sessions) {
      if (session.destroyed) {
        // Node ends the socket of a closed session and waits for the client to end its side before
        // the session's 'close'; a client that never does (half-open after GOAWAY) would keep the
        // descriptor for ever.
        watch.closingSince ??= now;
        if (now - watch.closingSince >= CLOSE_LINGER_MS) watch.socket?.destroy();
        continue;
      }
      const bytesRead = session.socket?.bytesRead ?? 0;
      if (bytesRead !== watch.bytesRead) {
        watch.bytesRead = bytesRead;
        watch.heardAt = now;
        watch.pingSentAt = undefined;
      }
      for (const [stream, waiting] of watch.streams) {
        const size = stream.bufferSize;
        if (size === 0) {
          if (waiting !== undefined) watch.streams.set(stream, undefined);
        } else if (waiting === undefined || size < waiting.size)
          watch.streams.set(stream, { since: now, size });
        else if (now - waiting.since >= sendTimeoutMs) stream.close(CANCEL);
      }
      if (session.closed) {
        // GOAWAY sent (a drain, or the client's own): its streams may still be read slowly.
        watch.closingSince ??= now;
        if (watch.streams.size === 0 && now - watch.closingSince >= livenessMs)
          destroy(session, watch);
        continue;
      }
      // Idle is without streams: a client's PINGs (or answers to ours) do not keep it open.
      if (watch.streams.size > 0) watch.quietSince = undefined;
      else if (watch.quietSince === undefined) watch.quietSince = now;
      else if (now - watch.quietSince >= idleMs) {
        session.close();
        continue;
      }
      if (watch.pingSentAt !== undefined) {
        if (now - watch.pingSentAt >= livenessMs) destroy(session, watch);
      } else if (now - watch.heardAt >= livenessMs) {
        watch.pingSentAt = now;
        // Refused, or failed, only by a session already on its way out (nghttp2 may have ended it
        // after a protocol error without a word), or one flooding with unanswered pings.
        const answered = (error: Error | null) => error && destroy(session, watch);
        if (session.ping(answered) === false) destroy(session, watch);
      }
    }
  }
}

function spendReset(session: ServerHttp2Session, watch: SessionWatch): void {
  if (watch.resetBudget === SPENT) return;
  const now = Date.now();
  watch.resetBudget = Math.min(
    RESET_BURST,
    watch.resetBudget + ((now - watch.resetAt) * RESETS_PER_SECOND) / 1000,
  );
  watch.resetAt = now;
  if (--watch.resetBudget >= 0) return;
  watch.resetBudget = SPENT;
  // GOAWAY says why, and is given a moment to go out (destroying the session at once can drop
  // it); then the session and its socket go, whatever the client does meanwhile.
  session.goaway(ENHANCE_YOUR_CALM);
  setTimeout(() => destroy(session, watch), GOAWAY_FLUSH_MS).unref();
}

function destroy(session: ServerHttp2Session, watch: SessionWatch): void {
  session.destroy();
  watch.socket?.destroy();
}
