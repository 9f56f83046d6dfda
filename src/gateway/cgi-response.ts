// A gateway's output as an HTTP response (RFC 3875 §6, REFERENCE-behaviour.md §16.1): a header
// block of at most 16 KiB and 128 lines ending at the first empty line, `Status` setting the
// status (`404 Not Found` or `HTTP/1.1 404`), `Location` making a 302 unless a 3xx is already set,
// the rest of the output the body, streamed as it comes (no Content-Length invented). Header fields
// a response cannot carry (connection-specific ones, invalid names or values) are dropped and named
// in the error log, never a crash.
import { validateHeaderName, validateHeaderValue } from 'node:http';
import { Readable } from 'node:stream';
import { CONNECTION_SPECIFIC } from '../http/hop-by-hop.js';

export const MAX_HEAD_BYTES = 16 * 1024;
export const MAX_HEAD_LINES = 128;

export interface CgiHead {
  readonly status: number;
  /** Name, value, name, value… as written. */
  readonly headers: string[];
  /** Fields left out, for the error log. */
  readonly dropped: readonly string[];
}

export interface HeadReading {
  /** Undefined when the output ended, or the block was too long, before an empty line. */
  readonly head: CgiHead | undefined;
  /** What follows the head (all of the output when there is none), paused. */
  readonly body: Readable;
}

/** Where the header block ends: the offset of the blank line and the length of the separator. */
function blockEnd(data: Buffer): { at: number; length: number } | undefined {
  for (let i = 0; i < data.length; i++) {
    const c = data[i];
    if (c !== 0x0a && c !== 0x0d) continue;
    if (c === 0x0a && data[i + 1] === 0x0a) return { at: i, length: 2 };
    if (c === 0x0d && data[i + 1] === 0x0a && data[i + 2] === 0x0d && data[i + 3] === 0x0a)
      return { at: i, length: 4 };
    if (c === 0x0a && data[i + 1] === 0x0d && data[i + 2] === 0x0a) return { at: i, length: 3 };
    if (c === 0x0d && data[i + 1] === 0x0d) return { at: i, length: 2 };
  }
  return undefined;
}

const LINE_BREAK = /\r\n|\r|\n/;

function parseHead(lines: readonly string[]): CgiHead {
  let status = 200;
  const headers: string[] = [];
  const dropped: string[] = [];
  for (const line of lines) {
    if (line === '') continue;
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon).trim() : '';
    const value = colon > 0 ? line.slice(colon + 1).trim() : '';
    const lower = name.toLowerCase();
    if (lower === 'status') {
      const code = /^(?:HTTP\/\d(?:\.\d)?\s+)?(\d{3})\b/.exec(value)?.[1];
      const n = code === undefined ? NaN : Number(code);
      if (n >= 200 && n <= 599) status = n;
      else dropped.push(line);
      continue;
    }
    if (!valid(name, value) || CONNECTION_SPECIFIC.has(lower)) {
      dropped.push(line);
      continue;
    }
    if (lower === 'location' && (status < 300 || status > 399)) status = 302;
    headers.push(name, value);
  }
  return { status, headers, dropped };
}

function valid(name: string, value: string): boolean {
  try {
    validateHeaderName(name);
    validateHeaderValue(name, value);
    return true;
  } catch {
    return false;
  }
}

/** The header block at the start of `data` and what follows it, when `data` holds a whole one. */
function headOf(data: Buffer): { head: CgiHead; rest: Buffer } | undefined {
  const end = blockEnd(data);
  if (end === undefined || end.at > MAX_HEAD_BYTES) return undefined;
  const lines = data.toString('latin1', 0, end.at).split(LINE_BREAK);
  if (lines.length > MAX_HEAD_LINES) return undefined;
  return { head: parseHead(lines), rest: data.subarray(end.at + end.length) };
}

/** A whole output, already read: its head (undefined when it has none) and its body. */
export function splitOutput(output: Buffer): { head: CgiHead | undefined; body: Buffer } {
  const found = headOf(output);
  return found === undefined
    ? { head: undefined, body: output }
    : { head: found.head, body: found.rest };
}

/** Reads `output` up to the end of its header block; the body is what follows, as it comes. */
export function readHead(output: Readable): Promise<HeadReading> {
  return new Promise((resolve, reject) => {
    let buffered: Buffer = Buffer.alloc(0);
    let lines = 0;
    const finish = (head: CgiHead | undefined, rest: Buffer, ended = false) => {
      output.off('data', onData);
      output.off('end', onEnd);
      output.off('error', onError);
      if (ended) return resolve({ head, body: Readable.from(rest.length > 0 ? [rest] : []) });
      output.pause();
      if (rest.length > 0) output.unshift(rest);
      resolve({ head, body: output });
    };
    const onData = (chunk: Buffer) => {
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      const found = headOf(buffered);
      if (found !== undefined) return finish(found.head, found.rest);
      const end = blockEnd(buffered);
      for (const c of chunk) if (c === 0x0a) lines++;
      // Too long to be a header block: the whole output is the body (Ferron's rule).
      if (buffered.length > MAX_HEAD_BYTES + 4 || lines > MAX_HEAD_LINES || end !== undefined)
        finish(undefined, buffered);
    };
    const onEnd = () => finish(undefined, buffered, true);
    const onError = (error: Error) => {
      output.off('data', onData);
      output.off('end', onEnd);
      reject(error);
    };
    output.on('data', onData);
    output.once('end', onEnd);
    output.once('error', onError);
  });
}
