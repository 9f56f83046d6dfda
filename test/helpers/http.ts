// Small HTTP clients for end-to-end tests: the one request helper (any Host header or method, HTTP or
// HTTPS to the test certificate), a response held unread, and raw bytes over a socket for what no
// well-behaved client sends.
import { get as httpGet, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { once } from 'node:events';
import { connect } from 'node:net';
import { TEST_CA } from './tls.js';

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  text: string;
  /** Whether the whole body came; false only with `cut: 'resolve'`. */
  complete: boolean;
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** A response cut short resolves with what came (`complete` false) instead of rejecting. */
  cut?: 'reject' | 'resolve';
  /** HTTPS to a server with the test certificate (helpers/tls.ts), named localhost. */
  tls?: boolean;
}

/** One request on a connection of its own to 127.0.0.1:`port` (or a rig's port). */
export function request(
  target: number | { readonly port: number },
  path: string,
  options: RequestOptions = {},
): Promise<Reply> {
  const port = typeof target === 'number' ? target : target.port;
  return new Promise((resolve, reject) => {
    const where = {
      host: '127.0.0.1',
      port,
      path,
      method: options.method ?? 'GET',
      headers: options.headers,
      agent: false,
    } as const;
    const req = (options.tls ? httpsRequest : httpRequest)(
      options.tls ? { ...where, ca: TEST_CA, servername: 'localhost' } : where,
      (res) => {
        const chunks: Buffer[] = [];
        const reply = () => {
          const body = Buffer.concat(chunks);
          return {
            status: res.statusCode ?? 0,
            headers: res.headers,
            body,
            text: body.toString('utf8'),
            complete: res.complete,
          };
        };
        res.on('data', (d: Buffer) => chunks.push(d));
        if (options.cut === 'resolve') {
          res.on('error', () => undefined);
          res.on('close', () => resolve(reply()));
        } else {
          res.on('end', () => resolve(reply()));
          res.on('error', reject);
        }
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

export interface HeldResponse {
  /** Reads the rest of the body: how much came, and whether it came whole. */
  finish(): Promise<{ received: number; complete: boolean }>;
}

/** A GET whose response is held, unread, once its head came: a request in flight at will. */
export function heldResponse(port: number, path: string): Promise<HeldResponse> {
  return new Promise((resolve, reject) => {
    httpGet({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      res.pause();
      resolve({
        finish: () =>
          new Promise((done) => {
            let received = 0;
            res.on('data', (d: Buffer) => (received += d.length));
            res.on('error', () => undefined);
            res.on('close', () => done({ received, complete: res.complete }));
            res.resume();
          }),
      });
    }).on('error', reject);
  });
}

/** Whether a connection to `port` is refused now (false: it was accepted, and is closed again). */
export function isRefused(port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (e: NodeJS.ErrnoException) =>
      e.code === 'ECONNREFUSED' ? resolve(true) : reject(e),
    );
  });
}

/** Writes `bytes` and reads until the server closes (or `ms` pass). */
export function raw(port: number, bytes: string, ms = 3000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    let data = '';
    const timer = setTimeout(() => socket.destroy(), ms);
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => (data += d));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(data);
    });
    socket.on('error', reject);
  });
}

/**
 * On one connection: `head` with `size` bytes of body sent as fast as the server takes them, then
 * `next`. Resolves with what came back once `marker` was seen twice (both answers), or once the
 * server closes, or after `ms`.
 */
export async function uploadThenAsk(
  port: number,
  head: string,
  size: number,
  next: string,
  marker: string,
  ms = 10_000,
): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let received = '';
  let answered!: () => void;
  const both = new Promise<void>((resolve) => (answered = resolve));
  socket.setEncoding('latin1').on('data', (d: string) => {
    received += d;
    if (received.split(marker).length >= 3) answered();
  });
  socket.on('error', () => undefined);
  socket.on('close', () => answered());
  const timer = setTimeout(() => answered(), ms);
  try {
    socket.write(`${head}Content-Length: ${size}\r\n\r\n`);
    const piece = Buffer.alloc(256 * 1024, 1);
    for (let sent = 0; sent < size && !socket.destroyed; sent += piece.length)
      if (!socket.write(piece)) await Promise.race([once(socket, 'drain'), once(socket, 'close')]);
    socket.write(next);
    await both;
    return received;
  } finally {
    clearTimeout(timer);
    socket.destroy();
  }
}
