// A response on a socket Node's HTTP/1 parser has let go of (CONNECT, an Upgrade request): the last
// on that connection. Node has taken its time limits and its error listener off the socket too: a
// reset while the answer is written would be an uncaught error, and a client that never reads it
// would keep the socket for ever. Both are settled here; a 101 lifts the time limit.
import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

// How long an HTTP/1 CONNECT's or Upgrade request's socket may take to receive its answer.
const BARE_ANSWER_MS = 10_000;

export function bareResponse(req: IncomingMessage, socket: Socket): ServerResponse {
  socket.on('error', () => socket.destroy());
  socket.setTimeout(BARE_ANSWER_MS, () => socket.destroy());
  const res = new ServerResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(socket);
  res.once('finish', () => socket.destroySoon());
  return res;
}
