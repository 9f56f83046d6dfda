// FastCGI 1.0 records (the FastCGI specification, §3 and §5): an 8-byte header, at most 65,535
// bytes of content, padding to a multiple of 8. One request per connection at a time, id 1.
import { variableBytes } from '../../gateway/cgi-variables.js';

export const VERSION = 1;
export const REQUEST_ID = 1;
export const MAX_CONTENT = 65_535;

export const enum RecordType {
  BeginRequest = 1,
  AbortRequest = 2,
  EndRequest = 3,
  Params = 4,
  Stdin = 5,
  Stdout = 6,
  Stderr = 7,
}

export const RESPONDER = 1;
export const KEEP_CONN = 1;

/** END_REQUEST protocolStatus values (§5.5). */
export const enum ProtocolStatus {
  RequestComplete = 0,
  CantMpxConn = 1,
  Overloaded = 2,
  UnknownRole = 3,
}

/** The records carrying `content`, split at the 65,535-byte limit; empty content gives one empty record. */
export function records(type: RecordType, content: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let at = 0;
  do {
    const length = Math.min(MAX_CONTENT, content.length - at);
    const padding = (8 - (length % 8)) % 8;
    const header = Buffer.alloc(8);
    header[0] = VERSION;
    header[1] = type;
    header.writeUInt16BE(REQUEST_ID, 2);
    header.writeUInt16BE(length, 4);
    header[6] = padding;
    out.push(header, content.subarray(at, at + length));
    if (padding > 0) out.push(Buffer.alloc(padding));
    at += length;
  } while (at < content.length);
  return out;
}

export function beginRequest(keepConn: boolean): Buffer[] {
  const body = Buffer.alloc(8);
  body.writeUInt16BE(RESPONDER, 0);
  body[2] = keepConn ? KEEP_CONN : 0;
  return records(RecordType.BeginRequest, body);
}

function lengthBytes(n: number): Buffer {
  if (n < 128) return Buffer.from([n]);
  const b = Buffer.alloc(4);
  b.writeUInt32BE((n | 0x80000000) >>> 0);
  return b;
}

/** Name-value pairs (§3.4), then the empty PARAMS record that ends them. */
export function params(vars: ReadonlyMap<string, string>): Buffer[] {
  const parts: Buffer[] = [];
  for (const [name, value] of vars) {
    const n = Buffer.from(name, 'latin1');
    const v = variableBytes(name, value);
    parts.push(lengthBytes(n.length), lengthBytes(v.length), n, v);
  }
  const content = Buffer.concat(parts);
  return [
    ...(content.length > 0 ? records(RecordType.Params, content) : []),
    ...records(RecordType.Params, Buffer.alloc(0)),
  ];
}

export interface ParsedRecord {
  readonly type: number;
  readonly requestId: number;
  readonly content: Buffer;
}

/** Reads records out of a byte stream, across chunk boundaries. */
export class RecordReader {
  private buffered: Buffer = Buffer.alloc(0);

  /** Nothing left over: the connection stands between records. */
  get empty(): boolean {
    return this.buffered.length === 0;
  }

  push(chunk: Buffer): ParsedRecord[] {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const out: ParsedRecord[] = [];
    for (;;) {
      if (this.buffered.length < 8) break;
      const length = this.buffered.readUInt16BE(4);
      const total = 8 + length + this.buffered[6]!;
      if (this.buffered.length < total) break;
      out.push({
        type: this.buffered[1]!,
        requestId: this.buffered.readUInt16BE(2),
        content: this.buffered.subarray(8, 8 + length),
      });
      this.buffered = this.buffered.subarray(total);
    }
    return out;
  }
}
