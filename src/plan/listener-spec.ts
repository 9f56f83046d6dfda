// The listeners a configuration asks for: each entry of `port` (plain HTTP) and, with `secure`, of
// `sport` (HTTPS), as a TCP address or a Unix socket, each named by the id /status lists and
// messages use.
import { withDefaults } from '../config/defaults.js';
import { listenAddresses } from '../config/listen-addresses.js';
import type { Settings } from '../config/properties.js';

export interface ListenerSpec {
  /** `http://127.0.0.1:8080`, `https://0.0.0.0:443`, `http://unix:/run/portico.sock`: what /status lists. */
  readonly id: string;
  /**
   * The id plus what a running protocol server cannot change (HTTP/2, client certificates, h2c,
   * PROXY headers): a reload that changes it replaces the protocol server, keeping the socket.
   */
  readonly key: string;
  /** undefined: every address (dual-stack). Unused for a Unix socket. */
  readonly address: string | undefined;
  /** 0 for a Unix socket. */
  readonly port: number;
  readonly secure: boolean;
  /** A Unix socket's path, in place of an address and port. */
  readonly path?: string;
  /** `[::]` taking IPv6 alone, beside an IPv4 socket for every address on the same port. */
  readonly ipv6Only?: boolean;
  /** HTTP/2 with prior knowledge beside HTTP/1.1 (plain listeners). */
  readonly h2c?: boolean;
  /** Connections may begin with a PROXY protocol header. */
  readonly proxyProtocol?: boolean;
}

/** `http://127.0.0.1:8080`, `https://[::1]:443`, `http://0.0.0.0:80` (every address): how /status and messages name a listener. */
export function listenerId(secure: boolean, address: string | undefined, port: number): string {
  const shown =
    address === undefined ? '0.0.0.0' : address.includes(':') ? `[${address}]` : address;
  return `${secure ? 'https' : 'http'}://${shown}:${port}`;
}

export function listenerSpecs(g: Settings): ListenerSpec[] {
  const d = withDefaults(g);
  const specs = (value: typeof d.port, secure: boolean): ListenerSpec[] =>
    listenAddresses(value).flatMap((a): ListenerSpec[] => {
      if (a === undefined) return [];
      const scheme = secure ? 'https' : 'http';
      const id =
        a.kind === 'unix'
          ? `${scheme}://unix:${a.path}`
          : `${listenerId(secure, a.host, a.port)}${a.ipv6Only ? ' (IPv6 only)' : ''}`;
      const protocol = secure
        ? ` h2=${d.enableHTTP2} mtls=${d.useClientCertificate}`
        : ` h2c=${d.enableH2C}`;
      const spec = {
        id,
        key: `${id}${protocol} proxy=${d.proxyProtocol}`,
        secure,
        ...(secure ? {} : { h2c: d.enableH2C }),
        proxyProtocol: d.proxyProtocol,
      };
      return a.kind === 'unix'
        ? [{ ...spec, address: undefined, port: 0, path: a.path }]
        : [{ ...spec, address: a.host, port: a.port, ipv6Only: a.ipv6Only }];
    });
  return [
    ...(d.secure && d.disableNonEncryptedServer ? [] : specs(d.port, false)),
    ...(d.secure ? specs(d.sport, true) : []),
  ];
}
