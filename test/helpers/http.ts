// Small HTTP clients for end-to-end tests: node:http requests with any Host header or method, and
// raw bytes over a socket for what no well-behaved client sends.
import { request as httpRequest } from 'node:http';
import { once } from 'node:events';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  text: string;
}

export function request(
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        method: options.method ?? 'GET',
        headers: options.headers,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body,
            text: body.toString('utf8'),
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
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
 * `next`. Resolves with what came back once `marker` was seen twice (both answers), or after 3 s.
 */
export async function uploadThenAsk(
  port: number,
  head: string,
  size: number,
  next: string,
  marker: string,
): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let received = '';
  socket.setEncoding('latin1').on('data', (d: string) => (received += d));
  socket.on('error', () => undefined);
  try {
    socket.write(`${head}Content-Length: ${size}\r\n\r\n`);
    const piece = Buffer.alloc(256 * 1024, 1);
    for (let sent = 0; sent < size && !socket.destroyed; sent += piece.length)
      if (!socket.write(piece)) await Promise.race([once(socket, 'drain'), once(socket, 'close')]);
    socket.write(next);
    for (let i = 0; i < 60 && received.split(marker).length < 3; i++) await sleep(50);
    return received;
  } finally {
    socket.destroy();
  }
}
