// One backend of a `proxyTo` list (or an `authTo`): its origin, which keys its connection pool,
// how it is reached (TCP or a Unix socket; HTTP/1.1, or HTTP/2 with prior knowledge), and its base
// path, joined with the request's as REFERENCE §14 says: the base path without its trailing `/`,
// then the request's path and query; the base URL's own query is dropped.
import { isIP } from 'node:net';
import { parseBackendUrl, type BackendProtocol } from '../config/backend-url.js';
import { redactCredentials } from '../config/redact.js';

export interface Backend {
  /** `http://host:port`, `h2c://host:port`, `unix:/path`…: the pool's key. */
  readonly origin: string;
  /** `host[:port]` as written (`localhost` for a Unix socket): the Host sent to it. */
  readonly authority: string;
  readonly protocol: BackendProtocol;
  readonly secure: boolean;
  readonly hostname: string;
  readonly port: number;
  /** The Unix socket it listens on, if it does. */
  readonly socketPath: string | undefined;
  /** The host name for SNI and certificate checks (undefined for an IP address). */
  readonly servername: string | undefined;
  /** The base path without its trailing `/` ("" for the root). */
  readonly basePath: string;
  /** The URL as configured, credentials redacted: how messages and /status name it. */
  readonly shown: string;
}

/** `url` has passed validation (config/backend-url.ts); a malformed one throws. */
export function parseBackend(url: string): Backend {
  const parsed = parseBackendUrl(url);
  if (typeof parsed === 'string') throw new Error(`${parsed}: ${redactCredentials(url)}`);
  const { protocol, socketPath } = parsed;
  const host = parsed.host.toLowerCase();
  // Node's URL keeps IPv6 literals in brackets; SNI names a host, never an address (RFC 6066 §3).
  const hostname = host.replace(/^\[|\]$/g, '');
  const literal = isIP(hostname) !== 0;
  return {
    origin:
      socketPath === undefined
        ? `${protocol}://${host}:${parsed.port}`
        : `${protocol === 'h2c' ? 'h2c+' : ''}unix:${socketPath}`,
    authority: parsed.authority,
    protocol,
    secure: protocol === 'https',
    hostname,
    port: parsed.port,
    socketPath,
    servername: literal || socketPath !== undefined ? undefined : host,
    basePath: parsed.basePath.replace(/\/+$/, ''),
    shown: redactCredentials(url),
  };
}

/** The path sent to the backend: its base path, then the request's path and query. */
export function backendPath(backend: Backend, path: string, query: string): string {
  return backend.basePath + path + query;
}
