// HTTP/1.1 on the wire for the fuzz targets: raw bytes out, and a strict reader of what came back,
// which accepts only a sequence of well-formed responses (RFC 9112) and says what is wrong otherwise.
import { connect } from 'node:net';

export interface Exchange {
  /** Everything the server sent. */
  readonly data: Buffer;
  /** The connection ended with an error (a reset), so the last response may have been cut. */
  readonly reset: boolean;
  /** This side had half-closed the connection before it closed. */
  readonly halfClosed: boolean;
  /** The connection was given up after `ms`, so the last response may have been cut. */
  readonly timedOut: boolean;
}

/**
 * Sends `pieces` on a fresh connection, one write each, then half-closes after `endAfterMs` (0: at
 * once; the server must answer what it has and close) unless `enough` says the replies so far are
 * complete first. Either way it gives up after `ms`.
 */
export function exchange(
  port: number,
  pieces: readonly Buffer[],
  options: { endAfterMs?: number; enough?: (data: Buffer) => boolean; ms?: number } = {},
): Promise<Exchange> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let reset = false;
    let ended = false;
    let timedOut = false;
    let endTimer: NodeJS.Timeout | undefined;
    const end = () => {
      ended = true;
      socket.end();
    };
    const socket = connect(port, '127.0.0.1', () => {
      for (const piece of pieces) socket.write(piece);
      const after = options.endAfterMs ?? 0;
      if (after === 0) end();
      else if (Number.isFinite(after)) endTimer = setTimeout(end, after);
    });
    const timer = setTimeout(() => {
      timedOut = true;
      socket.destroy();
    }, options.ms ?? 5000);
    socket.on('data', (d: Buffer) => {
      chunks.push(d);
      if (options.enough?.(Buffer.concat(chunks))) socket.destroy();
    });
    socket.on('error', () => (reset = true));
    socket.on('close', () => {
      clearTimeout(timer);
      clearTimeout(endTimer);
      resolve({ data: Buffer.concat(chunks), reset, halfClosed: ended, timedOut });
    });
  });
}

export interface Reply {
  readonly status: number;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: Buffer;
}

export class MalformedReply extends Error {}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// A field value: visible characters, spaces, tabs and obs-text; never CR, LF or NUL.
const FIELD_LINE = /^([^:]*):[ \t]*([\t\x20-\x7e\x80-\xff]*?)[ \t]*$/;
const STATUS_LINE = /^HTTP\/1\.1 ([1-5][0-9]{2}) [\t\x20-\x7e\x80-\xff]*$/;

/**
 * The responses in `data`, in order; throws MalformedReply at the first thing that is not a
 * well-formed HTTP/1.1 response. `head`: some request was HEAD, so a response whose Content-Length
 * is not followed by that many bytes may have none. `cut`: the connection was reset, so the last
 * response may stop anywhere. A response with no framing runs to the end of the data.
 */
export function parseReplies(data: Buffer, { head = false, cut = false } = {}): Reply[] {
  const text = data.toString('latin1');
  const replies: Reply[] = [];
  let at = 0;
  const fail = (why: string): never => {
    throw new MalformedReply(`${why} at byte ${at} of ${JSON.stringify(text.slice(0, 2000))}`);
  };
  while (at < text.length) {
    const end = text.indexOf('\r\n\r\n', at);
    if (end < 0) {
      if (cut) break;
      fail('a response head that never ends');
    }
    const [statusLine, ...fieldLines] = text.slice(at, end).split('\r\n');
    const status = STATUS_LINE.exec(statusLine!);
    if (!status) fail(`a bad status line ${JSON.stringify(statusLine)}`);
    const code = Number(status![1]);
    const headers: [string, string][] = [];
    for (const line of fieldLines) {
      const field = FIELD_LINE.exec(line);
      if (!field || !TOKEN.test(field[1]!)) fail(`a bad field line ${JSON.stringify(line)}`);
      headers.push([field![1]!.toLowerCase(), field![2]!]);
    }
    const all = (name: string) => headers.filter(([n]) => n === name).map(([, v]) => v);
    const lengths = all('content-length');
    const codings = all('transfer-encoding');
    at = end + 4;
    if (lengths.length > 1) fail('more than one Content-Length');
    if (lengths.length > 0 && codings.length > 0) fail('both Content-Length and Transfer-Encoding');
    if ((code < 200 || code === 204) && (lengths.length > 0 || codings.length > 0))
      fail(`framing fields in a ${code} response`);
    let body: Buffer = Buffer.alloc(0);
    if (code === 101) {
      // The connection now speaks another protocol: nothing after this is HTTP/1.1.
      replies.push({ status: code, headers, body: data.subarray(at) });
      return replies;
    } else if (code < 200 || code === 204 || code === 304) {
      // No body.
    } else if (codings.length > 0) {
      if (codings.join(',').trim().toLowerCase() !== 'chunked')
        fail(`Transfer-Encoding ${codings.join(',')}`);
      const chunks: Buffer[] = [];
      for (;;) {
        const lineEnd = text.indexOf('\r\n', at);
        if (lineEnd < 0) {
          if (cut) return [...replies, { status: code, headers, body: Buffer.concat(chunks) }];
          fail('a chunk size line that never ends');
        }
        const size = /^([0-9a-fA-F]+)(;[^\r\n]*)?$/.exec(text.slice(at, lineEnd));
        if (!size) fail(`a bad chunk size line ${JSON.stringify(text.slice(at, lineEnd))}`);
        const n = parseInt(size![1]!, 16);
        at = lineEnd + 2;
        if (n === 0) {
          const trailersEnd = text.indexOf('\r\n', at) === at ? at : text.indexOf('\r\n\r\n', at);
          if (trailersEnd < 0) {
            if (cut) break;
            fail('trailers that never end');
          }
          at = trailersEnd === at ? at + 2 : trailersEnd + 4;
          break;
        }
        if (at + n + 2 > text.length) {
          if (cut) return [...replies, { status: code, headers, body: Buffer.concat(chunks) }];
          fail('a chunk cut short');
        }
        chunks.push(data.subarray(at, at + n));
        if (text.slice(at + n, at + n + 2) !== '\r\n') fail('a chunk without its CRLF');
        at += n + 2;
      }
      body = Buffer.concat(chunks);
    } else if (lengths.length === 1) {
      if (!/^[0-9]+$/.test(lengths[0]!)) fail(`Content-Length ${JSON.stringify(lengths[0])}`);
      const n = Number(lengths[0]);
      const rest = text.slice(at);
      const bodyless = head && (rest.length === 0 || rest.startsWith('HTTP/1.1 '));
      if (!bodyless) {
        if (at + n > text.length) {
          if (!cut) fail(`a body shorter than its Content-Length ${n}`);
          replies.push({ status: code, headers, body: data.subarray(at) });
          return replies;
        }
        body = data.subarray(at, at + n);
        at += n;
      }
    } else {
      body = data.subarray(at);
      at = text.length;
    }
    replies.push({ status: code, headers, body });
    const closes = all('connection').some((v) => /(^|,)\s*close\s*(,|$)/i.test(v));
    if (closes && at < text.length) fail('bytes after a response that closes the connection');
  }
  return replies;
}

/** Whether `data` holds at least one whole final response, enough to stop reading. */
export function hasFinalReply(data: Buffer, head = false): boolean {
  try {
    return parseReplies(data, { head }).some((r) => r.status >= 200);
  } catch (e) {
    if (e instanceof MalformedReply) return false;
    throw e;
  }
}

/** What Portico's clientError handler writes for bytes Node's HTTP parser refuses. */
export const REFUSAL_400 =
  'HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\nServer: Portico\r\n\r\n';

/**
 * Known and reported, not fixed here: bytes after a request that closes its connection make Node's
 * parser fail, and Portico's clientError handler writes its 400 whatever response is in flight, so
 * the 400 follows a `Connection: close` response. Taken off the end so that the fuzzing goes on
 * looking for other faults; test/fuzz/found.test.ts keeps the fixed example.
 */
export function withoutRefusalAfterClose(data: Buffer): Buffer {
  const text = data.toString('latin1');
  if (!text.endsWith(REFUSAL_400) || text.length === REFUSAL_400.length) return data;
  const before = data.subarray(0, data.length - REFUSAL_400.length);
  return /\r\nConnection: close\r\n/i.test(before.toString('latin1')) ? before : data;
}
