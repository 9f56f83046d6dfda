// Raw HTTP/2 over TLS for the adversarial suite: frames and HPACK blocks built by hand, since
// node:http2's client refuses to send what the attacks are made of (invalid header fields, resets
// at any rate, header blocks that never end, references to an entry a thousand times).
import { EventEmitter, once } from 'node:events';
import { connect, type TLSSocket } from 'node:tls';

export const FrameType = {
  DATA: 0x0,
  HEADERS: 0x1,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  GOAWAY: 0x7,
  CONTINUATION: 0x9,
} as const;

export const Flag = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4 } as const;

/** RFC 9113 §7 error codes. */
export const ErrorCode = {
  PROTOCOL_ERROR: 0x1,
  INTERNAL_ERROR: 0x2,
  CANCEL: 0x8,
  ENHANCE_YOUR_CALM: 0xb,
} as const;

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

export interface Frame {
  readonly type: number;
  readonly flags: number;
  readonly stream: number;
  readonly payload: Buffer;
}

export function frame(
  type: number,
  flags: number,
  stream: number,
  payload: Buffer = Buffer.alloc(0),
): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(stream & 0x7fffffff, 5);
  return Buffer.concat([head, payload]);
}

export function rstStream(stream: number, code: number = ErrorCode.CANCEL): Buffer {
  const payload = Buffer.alloc(4);
  payload.writeUInt32BE(code);
  return frame(FrameType.RST_STREAM, 0, stream, payload);
}

/** The error code of a RST_STREAM or GOAWAY frame. */
export function errorCode(f: Frame): number {
  return f.payload.readUInt32BE(f.type === FrameType.GOAWAY ? 4 : 0);
}

/** RFC 7541 §5.1: an integer in an N-bit prefix, the prefix's other bits set to `high`. */
function integer(value: number, bits: number, high: number): Buffer {
  const max = (1 << bits) - 1;
  if (value < max) return Buffer.from([high | value]);
  const bytes = [high | max];
  for (value -= max; value >= 128; value = Math.floor(value / 128)) bytes.push((value % 128) + 128);
  bytes.push(value);
  return Buffer.from(bytes);
}

function text(value: string): Buffer {
  const bytes = Buffer.from(value, 'latin1');
  return Buffer.concat([integer(bytes.length, 7, 0), bytes]);
}

export const hpack = {
  /** A field as is, byte for byte: literal, new name, not indexed (RFC 7541 §6.2.2). */
  literal: (name: string, value: string) =>
    Buffer.concat([Buffer.from([0]), text(name), text(value)]),
  /** A literal added to the dynamic table (§6.2.1): the first one is index 62. */
  indexing: (name: string, value: string) =>
    Buffer.concat([Buffer.from([0x40]), text(name), text(value)]),
  /** A reference to a static or dynamic table entry (§6.1). */
  indexed: (index: number) => integer(index, 7, 0x80),
};

/** A plain GET's header block for `path`, each field literal. */
export function request(path: string, extra: readonly (readonly [string, string])[] = []): Buffer {
  const fields: [string, string][] = [
    [':method', 'GET'],
    [':scheme', 'https'],
    [':authority', 'localhost'],
    [':path', path],
  ];
  return Buffer.concat([...fields, ...extra].map(([n, v]) => hpack.literal(n, v)));
}

/**
 * The :status of a response HEADERS frame when the server sent it as a static-table reference
 * (nghttp2 does for these), or undefined.
 */
export function status(f: Frame): number | undefined {
  const STATIC: Record<number, number> = { 8: 200, 9: 204, 10: 206, 11: 304, 12: 400, 13: 404 };
  const first = f.payload[0];
  return first !== undefined && first & 0x80 ? STATIC[first & 0x7f] : undefined;
}

/**
 * A TLS connection that negotiated h2, its preface and SETTINGS sent and the server's SETTINGS
 * acknowledged; every frame the server sends is kept in `frames`.
 */
export class RawH2 {
  readonly frames: Frame[] = [];
  private pending: Buffer = Buffer.alloc(0);
  private readonly arrivals = new EventEmitter();
  readonly closed: Promise<void>;
  /** The code of the error the connection ended with (ECONNRESET or EPIPE: the server reset it). */
  error: string | undefined;

  private constructor(readonly socket: TLSSocket) {
    socket.on('error', (err: NodeJS.ErrnoException) => (this.error ??= err.code));
    // Not events.once: it would reject on the 'error' that comes before 'close'.
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.on('data', (data: Buffer) => this.read(data));
  }

  static async open(port: number, ca: Buffer): Promise<RawH2> {
    const socket = connect({ host: '127.0.0.1', port, ca, ALPNProtocols: ['h2'] });
    const client = new RawH2(socket);
    await once(socket, 'secureConnect');
    if (socket.alpnProtocol !== 'h2') throw new Error(`ALPN chose ${socket.alpnProtocol}`);
    socket.write(Buffer.concat([PREFACE, frame(FrameType.SETTINGS, 0, 0)]));
    await client.waitFor((f) => f.type === FrameType.SETTINGS && !(f.flags & Flag.ACK));
    return client;
  }

  /** Writes as fast as the server reads; false if the connection closed first. */
  async send(...frames: Buffer[]): Promise<boolean> {
    if (this.socket.destroyed) return false;
    const socket = this.socket;
    if (!socket.write(Buffer.concat(frames)))
      // Not events.once: a write the server cut short must end the wait, not throw.
      await new Promise<void>((resolve) => {
        const done = () => {
          socket.off('drain', done);
          socket.off('close', done);
          resolve();
        };
        socket.on('drain', done);
        socket.on('close', done);
      });
    return !socket.destroyed;
  }

  /** The first frame (received so far or later) that `match` accepts, or undefined after `ms`. */
  waitFor(match: (f: Frame) => boolean, ms = 5000): Promise<Frame | undefined> {
    const found = this.frames.find(match);
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => {
      const done = (f: Frame | undefined) => {
        clearTimeout(timer);
        this.arrivals.off('frame', onFrame);
        this.socket.off('close', onClose);
        resolve(f);
      };
      const onFrame = (f: Frame) => match(f) && done(f);
      const onClose = () => done(undefined);
      const timer = setTimeout(() => done(undefined), ms);
      this.arrivals.on('frame', onFrame);
      this.socket.once('close', onClose);
    });
  }

  /** Resolves true once the server closed the connection, false if it has not within `ms`. */
  async closedWithin(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const closed = await Promise.race([
      this.closed.then(() => true),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
    ]);
    clearTimeout(timer);
    return closed;
  }

  destroy(): void {
    this.socket.destroy();
  }

  private read(data: Buffer): void {
    this.pending = this.pending.length ? Buffer.concat([this.pending, data]) : data;
    while (this.pending.length >= 9) {
      const length = this.pending.readUIntBE(0, 3);
      if (this.pending.length < 9 + length) break;
      const f: Frame = {
        type: this.pending[3]!,
        flags: this.pending[4]!,
        stream: this.pending.readUInt32BE(5) & 0x7fffffff,
        payload: this.pending.subarray(9, 9 + length),
      };
      this.pending = this.pending.subarray(9 + length);
      this.frames.push(f);
      if (f.type === FrameType.SETTINGS && !(f.flags & Flag.ACK) && !this.socket.destroyed)
        this.socket.write(frame(FrameType.SETTINGS, Flag.ACK, 0));
      this.arrivals.emit('frame', f);
    }
  }
}
