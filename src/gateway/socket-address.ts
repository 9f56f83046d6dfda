// Where a gateway listens (`scgiTo`, `fcgiTo`): `tcp://host:port/` or `unix:///path`, as the
// property's format already checked (REFERENCE-behaviour.md §16.2).
import { connect, type Socket } from 'node:net';

export type SocketAddress =
  | { readonly kind: 'tcp'; readonly host: string; readonly port: number; readonly shown: string }
  | { readonly kind: 'unix'; readonly path: string; readonly shown: string };

export function parseSocketAddress(url: string): SocketAddress {
  const u = new URL(url);
  if (u.protocol === 'unix:')
    return { kind: 'unix', path: decodeURIComponent(u.pathname), shown: url };
  // `[::1]` comes back with its brackets, which net.connect does not take.
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
  return { kind: 'tcp', host, port: Number(u.port), shown: url };
}

/** Net's `onread`: reads land in `buffer` and go to `callback` instead of 'data' events. */
export interface ReadInto {
  readonly buffer: Buffer;
  readonly callback: (length: number, buffer: Buffer) => boolean;
}

/** A connection to the address; errors arrive as the socket's 'error' event. */
export function connectTo(address: SocketAddress, onread?: ReadInto): Socket {
  const socket =
    address.kind === 'unix'
      ? connect({ path: address.path, onread })
      : connect({ host: address.host, port: address.port, onread });
  socket.setNoDelay(true);
  return socket;
}

/**
 * A connection to the address once it is open; ETIMEDOUT after `timeoutMs`
 * (proxyConnectTimeout), which gatewayError makes a 504.
 */
export function connectWithin(
  address: SocketAddress,
  timeoutMs: number,
  onread?: ReadInto,
): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connectTo(address, onread);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        Object.assign(new Error(`no connection within ${timeoutMs} ms (proxyConnectTimeout)`), {
          code: 'ETIMEDOUT',
        }),
      );
    }, timeoutMs);
    const onError = (e: Error) => {
      clearTimeout(timer);
      reject(e);
    };
    socket.once('error', onError);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.off('error', onError);
      resolve(socket);
    });
  });
}
