// Bytes on the wire between clients and the server (TLS records included), for /metrics: counted
// from each connection's socket when it closes, and from the open ones when asked.
import type { Socket } from 'node:net';

export interface Traffic {
  received: number;
  sent: number;
}

export function addTraffic(total: Traffic, t: Traffic): void {
  total.received += t.received;
  total.sent += t.sent;
}

/** What `sockets` (open) have carried so far, over what `closed` had. */
export function trafficOf(closed: Traffic, sockets: Iterable<Socket>): Traffic {
  const total = { ...closed };
  for (const socket of sockets) addTraffic(total, socketTraffic(socket));
  return total;
}

export function socketTraffic(socket: Socket): Traffic {
  return { received: socket.bytesRead, sent: socket.bytesWritten };
}
