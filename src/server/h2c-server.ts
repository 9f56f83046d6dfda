// The Node server of HTTP/2 with prior knowledge on a plain listener (enableH2C): handed only the
// connections whose first bytes are HTTP/2's preface (connection-preamble.ts tells them from
// HTTP/1.1's), answered on node:http2's core API like HTTP/2 over TLS (http2-streams.ts, no
// compatibility layer: no 'request' listener is ever added). The HTTP/1.1 `Upgrade: h2c` dance is
// not offered.
import type {
  Http2Server,
  IncomingHttpHeaders,
  ServerHttp2Session,
  ServerHttp2Stream,
  Settings,
} from 'node:http2';
import type { Socket } from 'node:net';
import { http2Module } from '../tls/lazy-modules.js';

export interface H2cHooks {
  readonly stream: (
    stream: ServerHttp2Stream,
    headers: IncomingHttpHeaders,
    flags: number,
    rawHeaders: string[],
  ) => void;
  /** An HTTP/2 session, and the socket it is on. */
  readonly session: (session: ServerHttp2Session, socket: Socket) => void;
}

export function createH2cServer(settings: Settings, hooks: H2cHooks): Http2Server {
  const h2 = http2Module().createServer({ settings });
  h2.on('stream', hooks.stream);
  // Node makes the session in its own 'connection' listener and announces it at once: one that
  // runs first learns which socket it is on.
  let connecting: Socket | undefined;
  h2.prependListener('connection', (socket: Socket) => (connecting = socket));
  h2.on('session', (session: ServerHttp2Session) => {
    if (connecting) hooks.session(session, connecting);
    connecting = undefined;
  });
  return h2;
}
