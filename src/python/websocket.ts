// A WebSocket served by an ASGI application (ASGI 3 WebSocket scope): the handshake goes to the
// application first, and only its websocket.accept switches protocols (an HTTP/1.1 101 or an
// HTTP/2 extended CONNECT's 200, RFC 8441); a close before it is a 403, as the ASGI spec says, and
// no answer within proxyResponseTimeout a 504. Messages then flow both ways under the bridge's
// credit, and either side closing closes both.
import type { Ctx } from '../http/ctx.js';
import { HttpError } from '../http/http-error.js';
import { switchProtocols, type SwitchedConnection } from '../http/respond.js';
import { WINDOW } from './frames.js';
import type { PythonApplication } from './application.js';
import type { PythonStream } from './stream.js';
import { asgiScope, type Mount } from './heads.js';
import { lateError, ResponseClock } from '../gateway/timeouts.js';
import {
  acceptKey,
  closeFrame,
  encodeFrame,
  Opcode,
  WebSocketReader,
} from '../gateway/websocket-frames.js';

const WEBSOCKET = /^websocket$/i;

/** An HTTP/1.1 Upgrade or an HTTP/2 extended CONNECT asking for a WebSocket. */
export function isWebSocketRequest(ctx: Ctx): boolean {
  const headers = ctx.req.headers;
  if (ctx.method === 'CONNECT') return WEBSOCKET.test(String(headers[':protocol']));
  return ctx.upgrade !== undefined && WEBSOCKET.test(String(headers.upgrade));
}

export async function serveWebSocket(
  ctx: Ctx,
  { pool, what, limits }: PythonApplication,
  mount: Mount,
): Promise<void> {
  const headers = ctx.req.headers;
  const extended = ctx.method === 'CONNECT';
  const key = headers['sec-websocket-key'];
  if (!extended && (ctx.method !== 'GET' || typeof key !== 'string' || key === ''))
    throw new HttpError(400, 'bad-target', { detail: 'a WebSocket upgrade without a key' });
  if (headers['sec-websocket-version'] !== '13')
    throw new HttpError(426, 'bad-target', {
      headers: [['Sec-WebSocket-Version', '13']],
      detail: 'a WebSocket version other than 13',
    });
  const worker = await pool.worker();
  if (worker === undefined)
    throw new HttpError(503, 'upstream-unreachable', {
      detail: `${what}: no process of the application is running`,
    });
  // Gone while it waited: its 'close' has passed, and nothing would end the application's side.
  if (ctx.clientGone) return;
  const offered = String(headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  const scope = asgiScope(ctx, mount, { hasBody: false, websocket: { subprotocols: offered } });
  let stream: PythonStream | undefined;
  let connection: SwitchedConnection | undefined;
  let closeSent = false;
  const sendClose = (code: number, reason = '') => {
    if (connection === undefined || closeSent) return;
    closeSent = true;
    connection.output.end(closeFrame(code, reason));
  };
  const onClose = () => stream?.cancel();
  ctx.res.once('close', onClose);
  let clock: ResponseClock | undefined;
  let late = false;
  try {
    await new Promise<void>((resolve, reject) => {
      // The handshake's answer is the head; after it, a WebSocket may be quiet as long as it likes.
      clock = new ResponseClock(
        limits,
        () => false,
        () => {
          late = true;
          reject(lateError(what, 'head', limits, 0));
        },
      );
      const answered = () => clock!.stop();
      stream = worker.open(scope, {
        wsAccept(subprotocol, extra) {
          answered();
          const raw: string[] = [];
          for (const [name, value] of extra) raw.push(name, value);
          if (!extended) raw.push('Sec-WebSocket-Accept', acceptKey(key as string));
          if (subprotocol !== null && subprotocol !== undefined)
            raw.push('Sec-WebSocket-Protocol', subprotocol);
          try {
            connection = switchProtocols(ctx, 'websocket', raw);
          } catch (e) {
            stream!.cancel();
            return reject(
              new HttpError(502, 'upstream-failed', {
                detail: `${what}: the application's websocket.accept was refused: ${(e as Error).message}`,
              }),
            );
          }
          join(connection, stream!, sendClose, resolve);
        },
        wsMessage(binary, data) {
          const out = connection?.output;
          if (out === undefined || closeSent) return;
          const flushed = out.write(encodeFrame(binary ? Opcode.Binary : Opcode.Text, data));
          if (flushed) stream!.credit(data.length);
          else out.once('drain', () => stream!.credit(data.length));
        },
        wsClose(code, reason) {
          answered();
          if (connection === undefined)
            return reject(
              new HttpError(403, 'forbidden', {
                detail: `${what}: the application closed the WebSocket before accepting it`,
              }),
            );
          sendClose(code, reason);
        },
        credit(bytes) {
          stream!.outstanding -= bytes;
          if (stream!.outstanding < WINDOW) connection?.input.resume();
        },
        start() {
          answered();
          reject(
            new HttpError(403, 'forbidden', {
              detail: `${what}: the application answered the WebSocket with an HTTP response`,
            }),
          );
        },
        body: () => undefined,
        end() {
          answered();
          if (connection === undefined)
            return reject(
              new HttpError(500, 'application-error', {
                detail: `${what}: the application ended the WebSocket without accepting it`,
              }),
            );
          sendClose(1000);
        },
        fail(message) {
          answered();
          if (connection === undefined)
            return reject(
              new HttpError(500, 'application-error', { detail: `${what}: ${message}` }),
            );
          sendClose(1011);
        },
        gone(reason) {
          answered();
          if (connection === undefined)
            return reject(new HttpError(502, 'gateway-exited', { detail: reason }));
          sendClose(1011);
        },
      });
    });
  } finally {
    clock?.stop();
    ctx.res.off('close', onClose);
    if (late && stream) worker.abandon(stream);
  }
}

/** Client frames to the application, until either side closes; resolves when the connection has. */
function join(
  connection: SwitchedConnection,
  stream: PythonStream,
  sendClose: (code: number, reason?: string) => void,
  closed: () => void,
): void {
  const { input, output } = connection;
  let told = false;
  const tell = (code: number) => {
    if (told) return;
    told = true;
    stream.websocketClose(code);
  };
  const reader = new WebSocketReader({
    message(binary, data) {
      stream.websocket(data, { binary });
      if (stream.outstanding >= WINDOW) input.pause();
    },
    ping(data) {
      output.write(encodeFrame(Opcode.Pong, data));
    },
    close(code, reason) {
      tell(code);
      sendClose(code === 1005 ? 1000 : code, code >= 1002 && code <= 1009 ? reason : '');
    },
  });
  input.on('data', (chunk: Buffer) => reader.push(chunk));
  // The server paused the connection when it handed it over.
  input.resume();
  const end = () => {
    tell(1006);
    stream.cancel();
    output.destroy();
    closed();
  };
  input.once('end', end);
  input.once('error', end);
  output.once('close', end);
  output.on('error', end);
  // A connection closed before the application accepted has had its 'close'.
  if (output.destroyed) end();
}
