// One backend of a `proxyTo` list (or an `authTo`): its origin, which keys its connection pool,
// and its base path, joined with the request's as REFERENCE §14 says: the base path without its
// trailing `/`, then the request's path and query; the base URL's own query is dropped.
import { isIP } from 'node:net';
import { redactCredentials } from '../config/redact.js';

export interface Backend {
  /** `http://host:port`, the pool's key. */
  readonly origin: string;
  /** `host[:port]` as written: the Host sent to it. */
  readonly authority: string;
  readonly secure: boolean;
  /** The host name for SNI and certificate checks (undefined for an IP address). */
  readonly servername: string | undefined;
  /** The base path without its trailing `/` ("" for the root). */
  readonly basePath: string;
  /** The URL as configured, credentials redacted: how messages and /status name it. */
  readonly shown: string;
}

export function parseBackend(url: string): Backend {
  const u = new URL(url);
  const secure = u.protocol === 'https:';
  const port = u.port === '' ? (secure ? 443 : 80) : Number(u.port);
  const host = u.hostname;
  // Node's URL keeps IPv6 literals in brackets; SNI names a host, never an address (RFC 6066 §3).
  const literal = isIP(host.replace(/^\[|\]$/g, '')) !== 0;
  return {
    origin: `${u.protocol}//${host}:${port}`,
    authority: u.host,
    secure,
    servername: literal ? undefined : host,
    basePath: u.pathname.replace(/\/+$/, ''),
    shown: redactCredentials(url),
  };
}

/** The path sent to the backend: its base path, then the request's path and query. */
export function backendPath(backend: Backend, path: string, query: string): string {
  return backend.basePath + path + query;
}
