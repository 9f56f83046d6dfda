// The listeners a configuration asks for: one plain HTTP and, with `secure`, one HTTPS, each named
// by the id /status lists and messages use.
import { withDefaults } from '../config/defaults.js';
import { parseListen } from '../config/formats.js';
import type { Settings } from '../config/properties.js';

export interface ListenerSpec {
  /** `http://127.0.0.1:8080`, `https://0.0.0.0:443`: what /status lists. */
  readonly id: string;
  /** The id plus what a running protocol server cannot change (HTTP/2, client certificates): a reload that changes it replaces the protocol server, keeping the socket. */
  readonly key: string;
  /** undefined: every address (dual-stack). */
  readonly address: string | undefined;
  readonly port: number;
  readonly secure: boolean;
}

/** `http://127.0.0.1:8080`, `https://[::1]:443`, `http://0.0.0.0:80` (every address): how /status and messages name a listener. */
export function listenerId(secure: boolean, address: string | undefined, port: number): string {
  const shown =
    address === undefined ? '0.0.0.0' : address.includes(':') ? `[${address}]` : address;
  return `${secure ? 'https' : 'http'}://${shown}:${port}`;
}

export function listenerSpecs(g: Settings): ListenerSpec[] {
  const d = withDefaults(g);
  const spec = (value: number | string, secure: boolean): ListenerSpec => {
    const parsed =
      typeof value === 'number' ? { host: undefined, port: value } : parseListen(value)!;
    const address = parsed.host === 'localhost' ? '127.0.0.1' : parsed.host;
    const id = listenerId(secure, address, parsed.port);
    const key = secure ? `${id} h2=${d.enableHTTP2} mtls=${d.useClientCertificate}` : id;
    return { id, key, address, port: parsed.port, secure };
  };
  const out: ListenerSpec[] = [];
  if (!(d.secure && d.disableNonEncryptedServer)) out.push(spec(d.port, false));
  if (d.secure) out.push(spec(d.sport, true));
  return out;
}
