// Requests refused before they reach the pipeline: what the HTTP/1 parser cannot read (400, a
// head too large 431 or 414), what came too slowly (408), plain HTTP sent to an HTTPS port (400 in
// plain HTTP, as nginx answers). Each is answered on the connection, which then closes, and
// recorded for the access log.
import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { normalizeAddress } from '../http/ip-list.js';
import { clientOf } from './connection-clients.js';

/** A request refused before it was parsed, for the access log. */
export interface Refusal {
  readonly address: string;
  readonly status: number;
  /** The first line of what the client sent (at most 1,000 characters), if anything arrived. */
  readonly line: string | undefined;
  readonly protocol: string;
}

const PLAIN_HTTP_BODY = 'This port speaks HTTPS: ask for https:// instead of http://.\n';
const PLAIN_HTTP_TO_HTTPS =
  'HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n' +
  `Content-Length: ${PLAIN_HTTP_BODY.length}\r\nConnection: close\r\nServer: Portico\r\n\r\n` +
  PLAIN_HTTP_BODY;

// What a refused request's log line quotes of it: enough to recognise, never a megabyte. A head
// too large whose first line alone is that long is a request target too long (414, as nginx
// answers), not too many fields (431).
const MAX_LOGGED_LINE = 1000;

// How long a refused client may keep its end open after the answer (nginx's lingering_timeout is 5 s).
const LINGER_MS = 2_000;

/** What Node's HTTP/1 server reports as a request's time limit passed (a 408). */
export function requestTimeout(): NodeJS.ErrnoException {
  return Object.assign(new Error('Request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' });
}

/**
 * A client error of an HTTP/1 connection (Node's 'clientError', or a time limit passed): a 400,
 * 408, 414 or 431, unless the connection has nothing left to tell. `latest` is the connection's
 * latest response, if it has had a request.
 */
export function refuseClient(
  err: NodeJS.ErrnoException,
  socket: Socket,
  latest: ServerResponse | undefined,
  onRefused: ((refusal: Refusal) => void) | undefined,
): void {
  if (err.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
  const line = firstLine((err as NodeJS.ErrnoException & { rawPacket?: Buffer }).rawPacket);
  const status =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? line !== undefined && line.length >= MAX_LOGGED_LINE
        ? 414
        : 431
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 408
        : 400;
  const answer = `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Length: 0\r\nServer: Portico\r\n\r\n`;
  const answering = latest !== undefined && !latest.writableFinished;
  if (latest?.req.complete && !latest.shouldKeepAlive) {
    // That answer closes the connection (Node ends it once the answer is out): nothing follows.
  } else if (latest?.req.complete && answering) {
    // The refused request was pipelined behind one still being answered: its refusal follows
    // that answer, never cuts into it.
    latest.once('finish', () => socket.writable && endRefused(socket, answer));
  } else if (answering && latest.headersSent) {
    // The request being answered is the one refused (its body broke off): its answer is cut.
    return void socket.destroy();
  } else endRefused(socket, answer);
  onRefused?.({
    address: peerOf(socket),
    status,
    line,
    protocol: 'HTTP/1.1',
  });
}

/** Plain HTTP sent to an HTTPS port is told so in plain HTTP. */
export function refusePlainHttp(
  socket: Socket,
  onRefused: ((refusal: Refusal) => void) | undefined,
): void {
  endRefused(socket, PLAIN_HTTP_TO_HTTPS);
  onRefused?.({
    address: peerOf(socket),
    status: 400,
    line: undefined,
    protocol: 'HTTP/1.1',
  });
}

/** The client as the access log names it: a PROXY header's, or the peer. */
function peerOf(socket: Socket): string {
  return clientOf(socket)?.address ?? normalizeAddress(socket.remoteAddress ?? '');
}

function firstLine(packet: Buffer | undefined): string | undefined {
  if (packet === undefined || packet.length === 0) return undefined;
  const text = packet.subarray(0, MAX_LOGGED_LINE).toString('latin1');
  const end = text.search(/\r|\n/);
  return end < 0 ? text : text.slice(0, end);
}

/**
 * Answers a refused connection and closes it. The client gets a moment to read the answer and close
 * its end (closing at once with its bytes unread would reset the connection and could lose the
 * answer), but not for ever: one that keeps its end open is cut after LINGER_MS.
 */
function endRefused(socket: Socket, answer: string): void {
  socket.end(answer);
  const timer = setTimeout(() => socket.destroy(), LINGER_MS).unref();
  socket.once('close', () => clearTimeout(timer));
}
