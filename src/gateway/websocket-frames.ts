// WebSocket framing on the server side (RFC 6455 §5), for applications Portico runs itself (ASGI):
// client frames must be masked, no extension is negotiated, control frames are short and whole,
// text is UTF-8, and a message larger than its bound closes the connection (1009) instead of
// being buffered.
import { createHash } from 'node:crypto';

export const enum Opcode {
  Continuation = 0,
  Text = 1,
  Binary = 2,
  Close = 8,
  Ping = 9,
  Pong = 10,
}

/** The largest message taken from a client; a larger one closes the connection (1009). */
export const MAX_MESSAGE = 16 * 1024 * 1024;

/** RFC 6455 §4.2.2: the Sec-WebSocket-Accept for a Sec-WebSocket-Key. */
export function acceptKey(key: string): string {
  return createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
}

/** One unmasked frame, as a server sends them. */
export function encodeFrame(opcode: Opcode, payload: Buffer): Buffer {
  const length = payload.length;
  const size = length < 126 ? 2 : length < 65536 ? 4 : 10;
  const head = Buffer.allocUnsafe(size);
  head[0] = 0x80 | opcode;
  if (size === 2) head[1] = length;
  else if (size === 4) {
    head[1] = 126;
    head.writeUInt16BE(length, 2);
  } else {
    head[1] = 127;
    head.writeBigUInt64BE(BigInt(length), 2);
  }
  return Buffer.concat([head, payload]);
}

export function closeFrame(code: number, reason = ''): Buffer {
  const text = Buffer.from(reason.slice(0, 120));
  const payload = Buffer.allocUnsafe(2 + text.length);
  payload.writeUInt16BE(code);
  text.copy(payload, 2);
  return encodeFrame(Opcode.Close, payload);
}

/** What a reader reports; `close` also for a client that broke the protocol (with its code). */
export interface WebSocketEvents {
  message(binary: boolean, data: Buffer): void;
  ping(data: Buffer): void;
  close(code: number, reason: string): void;
}

/** A close code a client may send (RFC 6455 §7.4); others are a protocol error. */
function validCloseCode(code: number): boolean {
  return (
    (code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) ||
    (code >= 3000 && code <= 4999)
  );
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function isUtf8(data: Buffer): boolean {
  try {
    utf8.decode(data);
    return true;
  } catch {
    return false;
  }
}

/** Client frames in, messages out. After `close`, it reads nothing more. */
export class WebSocketReader {
  private pending: Buffer = Buffer.alloc(0);
  private fragments: Buffer[] = [];
  private fragmentsLength = 0;
  private fragmentBinary = false;
  private closed = false;

  constructor(private readonly events: WebSocketEvents) {}

  push(chunk: Buffer): void {
    if (this.closed) return;
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    while (!this.closed) {
      const used = this.frame(this.pending);
      if (used === 0) break;
      this.pending = this.pending.subarray(used);
    }
  }

  /** Reads one frame from the start of `data`; the bytes used, or 0 when it is not whole yet. */
  private frame(data: Buffer): number {
    if (data.length < 2) return 0;
    const fin = (data[0]! & 0x80) !== 0;
    const opcode = (data[0]! & 0x0f) as Opcode;
    if ((data[0]! & 0x70) !== 0) return this.fail(1002, 'reserved bits set');
    if ((data[1]! & 0x80) === 0) return this.fail(1002, 'client frames must be masked');
    let length = data[1]! & 0x7f;
    let at = 2;
    if (length === 126) {
      if (data.length < 4) return 0;
      length = data.readUInt16BE(2);
      at = 4;
    } else if (length === 127) {
      if (data.length < 10) return 0;
      const long = data.readBigUInt64BE(2);
      if (long > BigInt(MAX_MESSAGE)) return this.fail(1009, 'message too big');
      length = Number(long);
      at = 10;
    }
    const control = opcode >= 8;
    if (control && (!fin || length > 125)) return this.fail(1002, 'bad control frame');
    if (!control && this.fragmentsLength + length > MAX_MESSAGE)
      return this.fail(1009, 'message too big');
    if (data.length < at + 4 + length) return 0;
    const mask = data.subarray(at, at + 4);
    const payload = Buffer.allocUnsafe(length);
    for (let i = 0; i < length; i++) payload[i] = data[at + 4 + i]! ^ mask[i & 3]!;
    const used = at + 4 + length;
    switch (opcode) {
      case Opcode.Text:
      case Opcode.Binary:
        if (this.fragments.length > 0)
          return this.fail(1002, 'a new message inside a fragmented one');
        this.fragmentBinary = opcode === Opcode.Binary;
        this.collect(payload, fin);
        return used;
      case Opcode.Continuation:
        if (this.fragments.length === 0) return this.fail(1002, 'a continuation of nothing');
        this.collect(payload, fin);
        return used;
      case Opcode.Ping:
        this.events.ping(payload);
        return used;
      case Opcode.Pong:
        return used;
      case Opcode.Close: {
        this.closed = true;
        if (length === 0) this.events.close(1005, '');
        else if (length === 1) this.events.close(1002, 'bad close frame');
        else {
          const code = payload.readUInt16BE(0);
          const reason = payload.subarray(2);
          if (!validCloseCode(code) || !isUtf8(reason)) this.events.close(1002, 'bad close frame');
          else this.events.close(code, reason.toString('utf8'));
        }
        return used;
      }
      default:
        return this.fail(1002, 'unknown opcode');
    }
  }

  private collect(payload: Buffer, fin: boolean): void {
    this.fragments.push(payload);
    this.fragmentsLength += payload.length;
    if (!fin) return;
    const message =
      this.fragments.length === 1 ? this.fragments[0]! : Buffer.concat(this.fragments);
    this.fragments = [];
    this.fragmentsLength = 0;
    if (!this.fragmentBinary && !isUtf8(message)) return void this.fail(1007, 'text is not UTF-8');
    this.events.message(this.fragmentBinary, message);
  }

  private fail(code: number, reason: string): number {
    this.closed = true;
    this.events.close(code, reason);
    return 0;
  }
}
