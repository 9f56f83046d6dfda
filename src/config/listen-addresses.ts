// What `port` and `sport` bind: each entry of the list (or the one value) as a TCP address or a
// Unix socket, and which addresses two entries share. A bare port is every address, IPv4 and IPv6
// (one dual-stack socket, as in Ferron 1.x); listed beside `[::]:PORT` it is IPv4 alone and
// `[::]:PORT` IPv6 alone, as nginx reads `listen 80; listen [::]:80;`.
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { parseListen, unixSocketPath } from './formats.js';

export type ListenAddress =
  | {
      readonly kind: 'tcp';
      /** undefined: every address, IPv4 and IPv6. `localhost` is 127.0.0.1. */
      readonly host: string | undefined;
      readonly port: number;
      /** `[::]:PORT` listed beside an IPv4 socket for every address on the same port. */
      readonly ipv6Only: boolean;
    }
  | { readonly kind: 'unix'; readonly path: string };

/** The entries of a `port` or `sport` value, in the order written. */
function listenValues(value: number | string | readonly (number | string)[]) {
  return typeof value === 'object' ? value : [value];
}

/**
 * Each entry's address, or undefined for one the validator refuses; a bare port's and `[::]`'s
 * as their pairing makes them.
 */
export function listenAddresses(
  value: number | string | readonly (number | string)[],
): (ListenAddress | undefined)[] {
  const parsed = listenValues(value).map(parseOne);
  const dualStackV6 = new Set<number>();
  const everyV4 = new Set<number>();
  for (const a of parsed) {
    if (a?.kind !== 'tcp') continue;
    if (a.host === '::') dualStackV6.add(a.port);
    if (a.host === undefined || a.host === '0.0.0.0') everyV4.add(a.port);
  }
  return parsed.map((a) => {
    if (a?.kind !== 'tcp' || !dualStackV6.has(a.port) || !everyV4.has(a.port)) return a;
    if (a.host === '::') return { ...a, ipv6Only: true };
    return a.host === undefined ? { ...a, host: '0.0.0.0' } : a;
  });
}

function parseOne(entry: number | string): ListenAddress | undefined {
  if (typeof entry === 'number')
    return { kind: 'tcp', host: undefined, port: entry, ipv6Only: false };
  const path = unixSocketPath(entry);
  if (path !== undefined) return { kind: 'unix', path: resolve(path) };
  const tcp = parseListen(entry);
  if (tcp === undefined) return undefined;
  const host = tcp.host === 'localhost' ? '127.0.0.1' : tcp.host;
  return { kind: 'tcp', host: host?.toLowerCase(), port: tcp.port, ipv6Only: false };
}

/** The TCP ports of a `port` or `sport` value, in the order written. */
export function tcpPorts(value: number | string | readonly (number | string)[]): number[] {
  return listenAddresses(value).flatMap((a) => (a?.kind === 'tcp' ? [a.port] : []));
}

/** What of one family an address takes: every address of it, one, or none. */
type Share = 'all' | string | undefined;

function shares(a: ListenAddress & { kind: 'tcp' }): { v4: Share; v6: Share } {
  if (a.host === undefined) return { v4: 'all', v6: 'all' };
  if (a.host === '0.0.0.0') return { v4: 'all', v6: undefined };
  if (a.host === '::') return { v4: a.ipv6Only ? undefined : 'all', v6: 'all' };
  return isIP(a.host) === 4 ? { v4: a.host, v6: undefined } : { v4: undefined, v6: a.host };
}

const overlap = (x: Share, y: Share) =>
  x !== undefined && y !== undefined && (x === 'all' || y === 'all' || x === y);

/** Whether two addresses cannot both be bound: the same socket path, or a port they share. */
export function clash(a: ListenAddress, b: ListenAddress): boolean {
  if (a.kind === 'unix' || b.kind === 'unix')
    return a.kind === 'unix' && b.kind === 'unix' && a.path === b.path;
  if (a.port !== b.port) return false;
  const [x, y] = [shares(a), shares(b)];
  return overlap(x.v4, y.v4) || overlap(x.v6, y.v6);
}
