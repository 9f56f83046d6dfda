// The client a connection speaks for when its peer's address does not say it: the address a PROXY
// header named, or `unix:` for a Unix-socket peer (as nginx's $remote_addr). Kept by the object
// requests see as their socket (the TCP socket, the TLS socket, an HTTP/2 session's socket), read
// by the request handler and the refusals' log lines; gone with the connection.
import type { ProxiedClient } from './proxy-header.js';

const clients = new WeakMap<object, ProxiedClient>();

/** What a Unix-socket peer is called, having no address. */
export const UNIX_CLIENT: ProxiedClient = { address: 'unix:', port: 0 };

export function speakFor(connection: object, client: ProxiedClient): void {
  clients.set(connection, client);
}

export function clientOf(connection: object): ProxiedClient | undefined {
  return clients.get(connection);
}
