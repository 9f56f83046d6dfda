// The frames between Portico and its Python bridge (python/portico_bridge.py, docs/python.md): a
// 9-byte head (type u8, stream u32, length u32, big-endian) and the payload. Bodies flow under a
// per-stream window that the reader replenishes with CREDIT frames as it consumes them.

export const enum Frame {
  /** → bridge: the request's JSON head (WSGI environ or ASGI scope). */
  Request = 1,
  /** ← bridge: `{"status": N, "headers": [[name, value], …]}`. */
  Start = 2,
  Body = 3,
  /** The request body, or the response, is complete. */
  End = 4,
  /** u32: the reader consumed this many more body bytes. */
  Credit = 5,
  /** → bridge: the client went away; with a payload, a time limit ran out. */
  Cancel = 6,
  /** ← bridge: the application failed (text); the stream is over. */
  Fail = 7,
  /** ← bridge: `{"subprotocol": …, "headers": […]}`. */
  WsAccept = 8,
  WsText = 9,
  WsBinary = 10,
  /** u16 code, then the reason (UTF-8). */
  WsClose = 11,
  /** ← bridge, stream 0: `{"python": version, "executable": path}`. */
  Ready = 12,
  /** ← bridge, stream 0: `{"error": …, "traceback": …, "python": …, "executable": …}`. */
  StartFailed = 13,
  /** ← bridge on a connection, stream 0: no more requests here (its process is being replaced). */
  GoAway = 14,
  /** ← bridge on stdout, stream 0: a request given up on is still running (socket mode). */
  Stuck = 15,
}

/** Bytes either side may have sent on a stream beyond what the other has credited. */
export const WINDOW = 256 * 1024;
/** The reader credits in steps of at least this much, so a stream costs few CREDIT frames. */
export const CREDIT_STEP = WINDOW / 4;
/** The largest frame Portico accepts from the bridge: a bridge sending more is broken. */
export const MAX_FRAME = 16 * 1024 * 1024;

export function frame(type: Frame, stream: number, payload?: Buffer | string): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
  const length = body?.length ?? 0;
  const out = Buffer.allocUnsafe(9 + length);
  out[0] = type;
  out.writeUInt32BE(stream, 1);
  out.writeUInt32BE(length, 5);
  if (body) body.copy(out, 9);
  return out;
}

export function creditFrame(stream: number, bytes: number): Buffer {
  const out = Buffer.allocUnsafe(13);
  out[0] = Frame.Credit;
  out.writeUInt32BE(stream, 1);
  out.writeUInt32BE(4, 5);
  out.writeUInt32BE(bytes, 9);
  return out;
}

export type FrameHandler = (type: Frame, stream: number, payload: Buffer) => void;

/** Frames out of a byte stream cut anywhere; a frame too large is an error, not a buffer. */
export class FrameReader {
  private pending: Buffer | undefined;

  constructor(private readonly handle: FrameHandler) {}

  push(chunk: Buffer): void {
    const data = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = undefined;
    let at = 0;
    while (data.length - at >= 9) {
      const length = data.readUInt32BE(at + 5);
      if (length > MAX_FRAME) throw new Error(`a frame of ${length} bytes from the bridge`);
      if (data.length - at - 9 < length) break;
      const type = data[at] as Frame;
      const stream = data.readUInt32BE(at + 1);
      const payload = data.subarray(at + 9, at + 9 + length);
      at += 9 + length;
      this.handle(type, stream, payload);
    }
    if (at < data.length) this.pending = Buffer.from(data.subarray(at));
  }
}
