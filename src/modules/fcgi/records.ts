// FastCGI 1.0 records (the FastCGI specification, §3 and §5): an 8-byte header, at most 65,535
// bytes of content, padding to a multiple of 8. One request per connection at a time, id 1.
import { variableEncoding } from '../../gateway/cgi-variables.js';

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

const EMPTY = Buffer.alloc(0);

export const RESPONDER = 1;
export const KEEP_CONN = 1;

/** END_REQUEST protocolStatus values (§5.5). */
export const enum ProtocolStatus {
  RequestComplete = 0,
  CantMpxConn = 1,
  Overloaded = 2,
  UnknownRole = 3,
}

/** The records carrying `content`, split at the 65,535-byte limit; no content gives one empty record. */
export function records(type: RecordType, content: Buffer = EMPTY): Buffer[] {
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

/** A record header (§3.3) as Latin-1 text, padding included in its count. */
function header(type: RecordType, length: number): string {
  const padding = (8 - (length % 8)) % 8;
  return String.fromCharCode(VERSION, type, 0, REQUEST_ID, length >> 8, length & 255, padding, 0);
}

/** A name or value length (§3.4): one byte below 128, else four with the high bit set. */
function lengthText(n: number): string {
  if (n < 128) return String.fromCharCode(n);
  return String.fromCharCode(
    ((n >>> 24) & 0x7f) | 0x80,
    (n >>> 16) & 255,
    (n >>> 8) & 255,
    n & 255,
  );
}

const begin = (flags: number) =>
  header(RecordType.BeginRequest, 8) + String.fromCharCode(0, RESPONDER, flags, 0, 0, 0, 0, 0);
const BEGIN_KEEP = begin(KEEP_CONN);
const BEGIN_CLOSE = begin(0);
const PARAMS_END = header(RecordType.Params, 0);
const STDIN_END = header(RecordType.Stdin, 0);
const ASCII = /^[\x00-\x7f]*$/;

export interface RequestHeadOptions {
  /** The request has no body: the empty STDIN that says so goes out with the head. */
  readonly withoutBody: boolean;
  /** FCGI_KEEP_CONN: the application leaves the connection open after the response. */
  readonly keepConnection: boolean;
}

/**
 * What goes out before the body, as Latin-1 text (a character per byte) for one write:
 * BEGIN_REQUEST (responder, FCGI_KEEP_CONN or not), the variables as name-value pairs (§3.4) in PARAMS
 * records and the empty one that ends them, and the empty STDIN too when the request has no body.
 * A request carries some thirty variables: a buffer or a write per name and value cost 5 µs of the
 * exchange's 60 (Node 20), and the socket encodes the text itself without a Buffer made for it.
 */
export function requestHead(
  vars: ReadonlyMap<string, string>,
  { withoutBody, keepConnection }: RequestHeadOptions,
): string {
  let pairs = '';
  for (const [name, value] of vars) {
    // Text sent as UTF-8 becomes its bytes, each one a Latin-1 character.
    const bytes =
      variableEncoding(name) === 'utf8' && !ASCII.test(value)
        ? Buffer.from(value, 'utf8').toString('latin1')
        : value;
    pairs += lengthText(name.length) + lengthText(bytes.length) + name + bytes;
  }
  let head = keepConnection ? BEGIN_KEEP : BEGIN_CLOSE;
  for (let at = 0; at < pairs.length; at += MAX_CONTENT) {
    const piece = pairs.slice(at, at + MAX_CONTENT);
    head +=
      header(RecordType.Params, piece.length) + piece + '\0'.repeat((8 - (piece.length % 8)) % 8);
  }
  return head + (withoutBody ? PARAMS_END + STDIN_END : PARAMS_END);
}

export interface ParsedRecord {
  readonly type: number;
  readonly requestId: number;
  readonly content: Buffer;
}

/**
 * Reads records out of a byte stream, across chunk boundaries. The records' contents are views
 * into the chunk, valid until the next push (the connection reads into one reused buffer); a
 * record cut by the chunk's end is copied out and kept.
 */
export class RecordReader {
  private buffered: Buffer = EMPTY;

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
    if (this.buffered.length > 0) this.buffered = Buffer.from(this.buffered);
    return out;
  }
}
