// The backend URLs `proxyTo` and `secureProxyTo` accept: the forms Caddy, nginx and the Unix-socket
// HTTP clients write, read here once for the validator (a positioned error for a bad one) and for
// the pools (upstream/backend.ts).
//
//   http://host[:port][/base]          HTTP/1.1
//   https://host[:port][/base]         HTTP/1.1 over TLS (HTTP/2 by ALPN with `proxyHTTP2`)
//   h2c://host[:port][/base]           HTTP/2 without TLS, with prior knowledge (gRPC servers)
//   unix:/path/app.sock                HTTP/1.1 over a Unix socket (`unix:///path` too)
//   http://unix:/path/app.sock[:/base] the same, as nginx's `proxy_pass` writes it
//   http+unix://%2Fpath%2Fapp.sock[/base]  the same, the socket's path percent-encoded as the host
//   h2c+unix://%2Fpath%2Fapp.sock[/base]   HTTP/2 with prior knowledge over a Unix socket

/** The protocol spoken to the backend: HTTP/1.1 (HTTP/2 by ALPN when allowed), or h2c. */
export type BackendProtocol = 'http' | 'https' | 'h2c';

export interface BackendUrl {
  readonly protocol: BackendProtocol;
  /** The host as written (`[::1]` for an IPv6 literal); `localhost` for a Unix socket. */
  readonly host: string;
  /** `host[:port]` as written: the `Host` a backend receives. */
  readonly authority: string;
  readonly port: number;
  /** The socket's absolute path, for a Unix-socket backend. */
  readonly socketPath: string | undefined;
  /** The base path as written, without its query ("" or "/" for the root). */
  readonly basePath: string;
}

// sun_path holds 108 bytes on Linux, its last a NUL.
const MAX_SOCKET_PATH = 107;
const NGINX_UNIX = /^http:\/\/unix:(\/[^:]*)(?::(\/.*))?$/i;
const EXPECTED =
  'expected an http://, https:// or h2c:// URL or a Unix socket (unix:/path/app.sock, http+unix://%2Fpath%2Fapp.sock, h2c+unix://…)';

/** The parts of `value`, or the reason it is not a backend URL (a message without the value). */
export function parseBackendUrl(value: string): BackendUrl | string {
  const nginx = NGINX_UNIX.exec(value);
  if (nginx) return onSocket('http', nginx[1]!, nginx[2] ?? '');
  const lower = value.slice(0, 12).toLowerCase();
  if (lower.startsWith('unix:')) {
    const path = lower.startsWith('unix://') ? value.slice(7) : value.slice(5);
    if (lower.startsWith('unix://') && !path.startsWith('/'))
      return 'a Unix socket is written unix:/absolute/path or unix:///absolute/path, with no host';
    return onSocket('http', path, '');
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return EXPECTED;
  }
  const scheme = url.protocol.slice(0, -1).toLowerCase();
  if (scheme === 'http+unix' || scheme === 'h2c+unix') {
    let path: string;
    try {
      path = decodeURIComponent(url.host);
    } catch {
      return 'the socket path of an http+unix:// URL is its percent-encoded host (%2Frun%2Fapp.sock)';
    }
    return onSocket(scheme === 'h2c+unix' ? 'h2c' : 'http', path, url.pathname);
  }
  if (scheme !== 'http' && scheme !== 'https' && scheme !== 'h2c') return EXPECTED;
  if (url.hostname === '') return `${EXPECTED}; this one names no host`;
  return {
    protocol: scheme,
    host: url.hostname,
    authority: url.host,
    port: url.port === '' ? (scheme === 'https' ? 443 : 80) : Number(url.port),
    socketPath: undefined,
    basePath: url.pathname,
  };
}

function onSocket(protocol: BackendProtocol, path: string, basePath: string): BackendUrl | string {
  if (!path.startsWith('/')) return "a Unix socket's path must be absolute (from /)";
  if (path.includes('\0')) return "a Unix socket's path cannot hold a NUL";
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH)
    return `a Unix socket's path is at most ${MAX_SOCKET_PATH} bytes (this one has ${Buffer.byteLength(path)})`;
  return {
    protocol,
    host: 'localhost',
    authority: 'localhost',
    port: 0,
    socketPath: path,
    basePath,
  };
}
