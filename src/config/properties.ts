// The core of the property table: every property no single module owns. A module's own rows live
// in its folder (src/modules/NAME/properties.ts) and join these in the build's table
// (property-table.ts, assembled by modules/registry.ts). The validator, defaults, KDL mapping,
// `convert`, `/config` redaction, the JSON Schema and docs/configuration.md are all derived from
// the table: adding a property means adding one row (and using it in
// test/fixtures/valid/everything.yaml).
import {
  bool,
  either,
  finalStatusCode,
  list,
  mapOf,
  nullable,
  object,
  oneOf,
  port,
  section,
  statusCode,
  str,
  u32,
  u64,
  type Infer,
  type IntSpec,
  type SectionSpec,
  type Spec,
  type UnionSpec,
} from './types.js';

export type Scope = 'global' | 'host' | 'location' | 'errorConfig';
export const SCOPES: readonly Scope[] = ['global', 'host', 'location', 'errorConfig'];
export const GLOBAL_ONLY: readonly Scope[] = ['global'];
/** A location's conditions: with one of them its `path` may be left out (docs/configuration.md, Locations). */
export const LOCATION_CONDITIONS = [
  'pathRegex',
  'matchMethods',
  'matchHeaders',
  'matchQuery',
] as const;

export interface PropertyRow {
  readonly type: Spec;
  readonly scopes: readonly Scope[];
  readonly summary: string;
  /** The default exactly as the specification's tables give it; absent means "none". */
  readonly default?: unknown;
  /**
   * The modules that read a core row; using it without one of them in `loadModules` is a warning.
   * A module's own rows need none: the modules that bring a row are the ones that read it.
   */
  readonly module?: string | readonly string[];
  /** The whole value is a secret: `/config` shows `"[redacted]"`. */
  readonly sensitive?: boolean;
  /** The Ferron version that introduced it, or `Portico` for Portico's own additions. */
  readonly since: string;
  /** A complete YAML file showing the property, for the reference docs (converted to KDL there). */
  readonly example?: string;
  /** Ferron's other spellings, accepted with a warning that names this property. */
  readonly aliases?: readonly string[];
  /** Other names accepted silently: Ferron's own documentation uses them beside this one. */
  readonly synonyms?: readonly string[];
  /**
   * A list or object set in a host, location or errorConfig replaces the enclosing scope's instead
   * of extending it (a location's backends are its own; so is its fixed response).
   */
  readonly replacesParent?: boolean;
  /**
   * Properties that setting this one in a host or location also stops inheriting from the
   * enclosing scope (`allow` and `deny` are one rule list, as nginx's access rules are).
   */
  readonly replacesAlso?: readonly string[];
  /**
   * Of a module's row: the property it follows in the table's order (docs/configuration.md's and
   * the JSON Schema's), whichever module or the core brings that one. Absent, or naming what the
   * build lacks, it follows its module's previous row (a module's first row goes at the end).
   */
  readonly listedAfter?: string;
}

export type PropertyRows = Readonly<Record<string, PropertyRow>>;

/** A row typed as written, so that `Settings` knows each property's type. */
export const row = <const R extends PropertyRow>(r: R): R => r;

const G = GLOBAL_ONLY;
const GLOBAL_AND_HOST: readonly Scope[] = ['global', 'host'];
const ALL: readonly Scope[] = SCOPES;
const REQUEST_COUNT: IntSpec = {
  ...u32(1),
  minReason: 'a limit that lets no request through is a `deny`',
};
/** Where a request is answered: not in an errorConfig, which renders a page for one. */
const SERVED: readonly Scope[] = ['global', 'host', 'location'];
const V1 = '1.0.0';
const PORTICO = 'Portico';

const listenSpec = either(port(), str('listen'));
// Milliseconds for a timer: Node's take at most 2^31 − 1 (about 24.8 days), and fire a larger one
// at once, so a larger value is refused rather than turned into no time at all.
const ms = (min = 0) => u32(min, 2 ** 31 - 1);
// `port` and `sport`: one listener as Ferron 1.x writes it, or a list of them.
const listenerSpec = either(port(), str('listener'));
const listenersSpec: UnionSpec<number | string | (number | string)[]> = {
  kind: 'union',
  options: [port(), str('listener'), list(listenerSpec, { nonEmpty: true })],
};
const LISTENERS_EXAMPLE =
  'global:\n  port:\n    - 80\n    - "[::]:80"\n    - "127.0.0.1:8080"\n    - unix:/run/portico/http.sock\n  socketMode: "0660"\n';
const tlsVersion = oneOf('TLSv1.2', 'TLSv1.3');
// The admin block's endpoint directives: CONTRACT.md makes a bare directive mean true.
const flag = bool({ bareMeansTrue: true });

// Header names whose values are credentials: the standard ones, and any name holding one of the
// words (`X-Api-Key`, `X-Auth-Token`, `X-Session-Id`), compared in lower case.
const CREDENTIAL_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'set-cookie'];
const CREDENTIAL_WORDS = [
  'key',
  'token',
  'secret',
  'password',
  'passwd',
  'auth',
  'session',
  'credential',
];

// Headers a response must not be given by configuration: HTTP/2 forbids connection-specific headers
// (RFC 9113 §8.2.2; Node refuses the whole response), and the server frames every body itself.
const CONNECTION_SPECIFIC =
  'it is connection-specific (HTTP/2 forbids it in every response; the server manages connections itself)';
const RESPONSE_FRAMING = 'the server sets it from each body, so a fixed value would contradict it';
export const NOT_CUSTOM_HEADERS: Readonly<Record<string, string>> = {
  connection: CONNECTION_SPECIFIC,
  'keep-alive': CONNECTION_SPECIFIC,
  'proxy-connection': CONNECTION_SPECIFIC,
  te: CONNECTION_SPECIFIC,
  'transfer-encoding': CONNECTION_SPECIFIC,
  upgrade: CONNECTION_SPECIFIC,
  'http2-settings': CONNECTION_SPECIFIC,
  'content-length': RESPONSE_FRAMING,
  trailer:
    'it announces trailer fields, which no configured header can send (Node refuses it on a response not sent chunked)',
};

/** The largest `respond` body: a fixed answer, not a page a file would serve better. */
export const RESPOND_BODY_MAX = 64 * 1024;
export const RESPOND_STATUS = 200;
export const RESPOND_CONTENT_TYPE = 'text/plain; charset=utf-8';

export const CORE_PROPERTIES = {
  // ── global only ─────────────────────────────────────────────────────────────────────────────
  port: row({
    type: listenersSpec,
    default: 80,
    scopes: G,
    since: V1,
    summary:
      'HTTP port or address-port pair. Portico: or a list of them, and `unix:/path` for a Unix socket; a bare port is every address, IPv4 and IPv6, unless `[::]:PORT` is listed too, which then takes IPv6 and the bare port IPv4 (nginx’s `listen 80; listen [::]:80;`).',
    example: LISTENERS_EXAMPLE,
  }),
  sport: row({
    type: listenersSpec,
    default: 443,
    scopes: G,
    since: V1,
    summary:
      'HTTPS port or address-port pair. Portico: or a list of them, as `port`; HTTP redirects to HTTPS name the first TCP port of the list.',
  }),
  secure: row({ type: bool(), default: false, scopes: G, since: V1, summary: 'Enables HTTPS.' }),
  socketMode: row({
    type: str('file-mode'),
    default: '0660',
    scopes: G,
    since: PORTICO,
    summary:
      'The permissions of the Unix sockets `port` and `sport` name, as a quoted octal string: who may connect (writing a socket is connecting to it). The default lets the owner and the group in: run the proxy in front as a member of Portico’s group.',
    example: LISTENERS_EXAMPLE,
  }),
  enableH2C: row({
    type: bool(),
    default: false,
    scopes: G,
    since: PORTICO,
    summary:
      'HTTP/2 with prior knowledge (h2c, RFC 9113 §3.3) on the plain listeners, beside HTTP/1.1 on the same port: for gRPC clients and load balancers that end TLS in front. The HTTP/1.1 `Upgrade: h2c` dance is not offered.',
  }),
  proxyProtocol: row({
    type: bool(),
    default: false,
    scopes: G,
    since: PORTICO,
    summary:
      'Accepts a PROXY protocol header (v1 or v2, as HAProxy’s `send-proxy` and cloud load balancers send) at the start of connections from the global `trustedProxies` and from Unix-socket peers, on every listener: the address it names becomes the client. From a trusted peer the header is optional; from any other peer a connection that begins with one is refused.',
    example:
      'global:\n  proxyProtocol: true\n  trustedProxies:\n    - 10.0.0.5\n    - 10.0.1.0/24\n',
  }),
  enableHTTP2: row({
    type: bool(),
    default: true,
    scopes: G,
    since: V1,
    summary: 'Enables HTTP/2.',
  }),
  http2Settings: row({
    type: object('HTTP/2 settings', {
      initialWindowSize: { spec: u32(0, 2147483647), summary: 'Initial flow-control window size.' },
      maxFrameSize: { spec: u32(16384, 16777215), summary: 'Largest accepted frame payload.' },
      maxConcurrentStreams: {
        spec: u32(),
        default: 128,
        summary:
          'Maximum concurrent streams per connection, advertised to every client (nginx: 128, Caddy: 250).',
      },
      maxHeaderListSize: { spec: u32(), summary: 'Maximum accepted header list size.' },
      enableConnectProtocol: {
        spec: bool(),
        default: false,
        summary: 'Supports CONNECT for tunneling TCP connections (RFC 8441 extended CONNECT).',
      },
      idleTimeout: {
        spec: u32(1),
        default: 120000,
        summary:
          'Portico: how long (ms) a connection may stay open without a stream before it gets GOAWAY (nginx’s `keepalive_timeout`, Caddy’s `idle_timeout`).',
      },
      pingTimeout: {
        spec: u32(1),
        default: 20000,
        summary:
          'Portico: a connection that has sent nothing for this long (ms) is pinged, and closed if the PING is not answered within as long again: a client that vanished holds nothing.',
      },
    }),
    scopes: G,
    since: V1,
    summary: 'HTTP/2 settings.',
    example:
      'global:\n  http2Settings:\n    initialWindowSize: 65535\n    maxConcurrentStreams: 128\n    enableConnectProtocol: true\n',
  }),
  logFilePath: row({
    type: str('path'),
    scopes: GLOBAL_AND_HOST,
    since: V1,
    summary:
      "Access log file path. Portico: also per host, for that host's requests; requests no host matched go to the global one.",
    example:
      'global:\n  logFilePath: /var/log/portico/access.log\nhosts:\n  - domain: shop.example.com\n    logFilePath: /var/log/portico/shop.access.log\n',
  }),
  errorLogFilePath: row({
    type: str('path'),
    scopes: GLOBAL_AND_HOST,
    since: V1,
    summary:
      "Error log file path. Portico: also per host, for that host's errors; server-wide ones go to the global one.",
  }),
  logFormat: row({
    type: str(),
    default: 'combined',
    scopes: GLOBAL_AND_HOST,
    since: PORTICO,
    summary:
      'Access log format: `combined`, `common`, `json` (one object per line), or a template with `{placeholders}` (docs/running.md lists them).',
    example:
      'global:\n  logFilePath: /var/log/portico/access.json\n  logFormat: json\nhosts:\n  - domain: api.example.com\n    logFilePath: /var/log/portico/api.log\n    logFormat: \'{client} "{request}" {status} {bytes} {duration} {upstream_time}\'\n',
  }),
  cert: row({
    type: str('path'),
    scopes: G,
    since: V1,
    summary: 'Path to the TLS certificate (PEM; a chain may follow).',
  }),
  key: row({
    type: str('path'),
    scopes: G,
    since: V1,
    sensitive: true,
    summary: 'Path to the private key (PEM).',
  }),
  sni: row({
    type: mapOf(
      'SNI host name',
      object('SNI certificate', {
        cert: { spec: str('path'), required: true, summary: 'Path to the certificate.' },
        key: {
          spec: str('path'),
          required: true,
          sensitive: true,
          summary: 'Path to the private key.',
        },
      }),
      { keyFormat: 'domain' },
    ),
    scopes: G,
    since: V1,
    summary:
      'Certificates by SNI host name (exact or `*.example.com`); each value has `cert` and `key`.',
    example:
      'global:\n  sni:\n    example.com:\n      cert: /etc/tls/example.com.crt\n      key: /etc/tls/example.com.key\n    "*.example.org":\n      cert: /etc/tls/example.org.crt\n      key: /etc/tls/example.org.key\n',
  }),
  loadModules: row({
    type: list(str('module')),
    scopes: G,
    since: V1,
    summary: 'Modules loaded at startup. Handlers run in list order.',
    example: 'global:\n  loadModules:\n    - cache\n    - rproxy\n',
  }),
  useClientCertificate: row({
    type: bool(),
    default: false,
    scopes: G,
    since: V1,
    summary: 'Require clients to present a certificate.',
  }),
  cipherSuite: row({
    type: list(str('cipher-suite')),
    scopes: G,
    since: V1,
    summary:
      "Supported cipher suites (IANA or OpenSSL names). Unset: Mozilla's intermediate profile (the TLS 1.3 suites, and forward-secret AEAD suites for TLS 1.2).",
    example:
      'global:\n  cipherSuite:\n    - TLS_AES_128_GCM_SHA256\n    - TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256\n',
  }),
  ecdhCurve: row({
    type: list(str('ecdh-curve')),
    scopes: G,
    since: V1,
    summary: 'Supported ECDH curves.',
  }),
  tlsMinVersion: row({
    type: tlsVersion,
    default: 'TLSv1.2',
    scopes: G,
    since: V1,
    summary: 'Minimum TLS version.',
  }),
  tlsMaxVersion: row({
    type: tlsVersion,
    default: 'TLSv1.3',
    scopes: G,
    since: V1,
    summary: 'Maximum TLS version.',
  }),
  disableNonEncryptedServer: row({
    type: bool(),
    default: false,
    scopes: G,
    since: V1,
    summary: 'When true and HTTPS runs, the HTTP server is disabled.',
  }),
  blocklist: row({
    type: list(str('ip-or-cidr')),
    scopes: G,
    since: V1,
    summary: 'Blocked IP addresses and CIDR ranges. Applies only to non-forward-proxy requests.',
    example:
      'global:\n  blocklist:\n    - 203.0.113.7\n    - 198.51.100.0/24\n    - "2001:db8::/32"\n',
  }),
  rateLimit: row({
    type: list(
      object('rate limit', {
        requests: {
          spec: REQUEST_COUNT,
          required: true,
          summary: 'Requests per `per`: the rate at which a client’s tokens come back.',
        },
        per: {
          spec: oneOf('1s', '1m', '1h'),
          default: '1s',
          summary: 'The period `requests` counts over.',
        },
        burst: {
          spec: u32(1),
          summary:
            'Requests a client may send at once: the size of its bucket. Unset: `requests` (a full period’s worth).',
        },
        key: {
          spec: str('rate-limit-key'),
          default: 'clientIP',
          summary:
            'What a bucket is kept for: `clientIP` (the client address after `trustedProxies`, an IPv6 client by its /64), `uri` (the request path, without the query) or `header:NAME` (the value of that request header, kept as its SHA-256; a request without it is counted by its client address).',
        },
        maxKeys: {
          spec: u32(1),
          default: 100000,
          summary:
            'Keys the limit remembers at most (about 140 bytes each): past it, the least recently used is forgotten, and its client starts again with a full bucket (nginx’s zone size). A bucket that has filled up again is forgotten anyway.',
        },
      }),
      { single: true },
    ),
    scopes: SERVED,
    since: PORTICO,
    summary:
      'Token-bucket rate limits: one bucket per key, a request takes a token, and a client whose bucket is empty gets 429 with `Retry-After` (whole seconds) and the IETF `RateLimit-Policy` and `RateLimit` fields, through `errorPages` like any error. A location’s limits add to its host’s and the global ones: a request must pass each (the innermost is checked first, and a request it refuses takes nothing from the others), and a limit set on a host is one bucket per key whichever location answers. Counted for the whole server, worker processes together (with `workers` above 1, the key stored first is forgotten first when a limit is full).',
    example:
      'hosts:\n  - domain: example.com\n    rateLimit:\n      requests: 100\n      per: 1m\n    locations:\n      - path: /api\n        rateLimit:\n          - requests: 10\n            per: 1s\n            burst: 20\n            key: "header:X-Api-Key"\n',
  }),
  allow: row({
    type: list(str('ip-or-cidr')),
    scopes: SERVED,
    since: PORTICO,
    replacesParent: true,
    replacesAlso: ['deny'],
    summary:
      'The only clients let in (addresses, CIDR ranges, `localhost`); every other client gets 403. Matched against the client address the access log shows (after `trustedProxies`), after `deny`: the two are one rule list, `deny` entries first, the first match deciding, as nginx’s `deny …; allow …; deny all;`. A host or location that sets `allow` or `deny` replaces both lists of the enclosing scope; an empty list sets no rule (a location’s `allow: []` lets in everyone its host held back).',
    example:
      'hosts:\n  - domain: example.com\n    locations:\n      - path: /admin\n        deny:\n          - 10.0.0.13\n        allow:\n          - 127.0.0.1\n          - 10.0.0.0/8\n',
  }),
  deny: row({
    type: list(str('ip-or-cidr')),
    scopes: SERVED,
    since: PORTICO,
    replacesParent: true,
    replacesAlso: ['allow'],
    summary:
      'Clients refused with 403 (addresses, CIDR ranges, `localhost`), matched against the client address the access log shows (after `trustedProxies`) before `allow`. Without `allow`, everyone else is let in. A host or location that sets `allow` or `deny` replaces both lists of the enclosing scope.',
  }),
  enableOCSPStapling: row({
    type: bool(),
    default: true,
    scopes: G,
    since: V1,
    summary:
      'OCSP stapling. Certificates with the Must-Staple extension do not work with automatic TLS.',
  }),
  environmentVariables: row({
    // Database passwords and API keys live here: `/config` shows the names only.
    type: mapOf('variable name', str('env-value'), {
      keyFormat: 'env-name',
      sensitiveValues: true,
    }),
    scopes: G,
    since: V1,
    summary: 'Environment variables for the server (name to string value).',
    example: 'global:\n  environmentVariables:\n    APP_ENV: production\n',
  }),
  enableAutomaticTLS: row({
    type: bool(),
    default: false,
    scopes: G,
    since: V1,
    summary:
      'Automatic certificates from an ACME certificate authority (Let’s Encrypt unless `automaticTLSDirectoryUrl` names another): one certificate per host `domain` (wildcard domains are ignored), obtained and renewed in the background, validated by TLS-ALPN-01 on the HTTPS port (or HTTP-01 with `useAutomaticTLSHTTPChallenge`). The CA connects to ports 443 (and 80): they must reach Portico. `cert`, `key` and `sni` are ignored.',
  }),
  automaticTLSContactEmail: row({
    type: str('email'),
    scopes: G,
    since: V1,
    summary: 'Contact e-mail for the ACME account.',
  }),
  automaticTLSContactCacheDirectory: row({
    type: str('path'),
    scopes: G,
    since: V1,
    summary:
      'Where automatic TLS keeps the ACME account key and the certificates (keys written 0600); unset, `$XDG_DATA_HOME/portico/acme` (`~/.local/share/portico/acme`), named in the startup log.',
  }),
  automaticTLSCaProduction: row({
    type: bool(),
    default: true,
    scopes: G,
    since: V1,
    summary:
      "When false, the certificate authority's staging ACME endpoint is used instead of production.",
    synonyms: ['automaticTLSLetsEncryptProduction'],
  }),
  useAutomaticTLSHTTPChallenge: row({
    type: bool(),
    default: false,
    scopes: G,
    since: '1.1.0',
    summary:
      'Use the HTTP-01 challenge (answered on the plain HTTP port, before redirects, authentication and the blocklist) instead of TLS-ALPN-01; needs the HTTP listener.',
  }),
  enableHTTP3: row({
    type: bool(),
    default: false,
    scopes: G,
    since: '1.1.0',
    summary:
      'HTTP/3 (experimental). Cipher suite `TLS_AES_128_GCM_SHA256` must be enabled. Not served on runtimes without QUIC (a startup warning says so).',
  }),
  timeout: row({
    type: nullable(ms()),
    default: 300000,
    scopes: G,
    since: V1,
    summary:
      'Maximum request processing time in ms, after which the connection is reset. Null disables it (not recommended: slow HTTP attacks).',
  }),
  maxConnections: row({
    type: u32(1),
    default: 10000,
    scopes: G,
    since: PORTICO,
    summary:
      'Connections open at once per listening address; beyond, new ones are closed as they are accepted. Bounds the descriptors and memory a flood of connections can take (nginx: `worker_connections` × workers).',
  }),
  requestHeaderTimeout: row({
    type: ms(1),
    default: 30000,
    scopes: G,
    since: PORTICO,
    summary:
      'How long (ms) a client has to send a whole request head, from its connection or its previous response; beyond, 408 and the connection is closed (slowloris). nginx’s `client_header_timeout`.',
  }),
  requestTimeout: row({
    type: ms(1),
    default: 300000,
    scopes: G,
    since: PORTICO,
    summary:
      'How long (ms) a client has to send a whole request, body included; beyond, the request is cut off (slow POST).',
  }),
  keepAliveTimeout: row({
    type: ms(1),
    default: 5000,
    scopes: G,
    since: PORTICO,
    summary:
      'How long (ms) an HTTP/1.1 connection may stay idle between two requests before it is closed. nginx’s `keepalive_timeout`.',
  }),
  sendTimeout: row({
    type: ms(1),
    default: 60000,
    scopes: G,
    since: PORTICO,
    summary:
      'How long (ms) a response’s output may wait without moving on (a client that stopped reading, an HTTP/2 window left shut) before the connection (HTTP/1.1) or the stream (HTTP/2) is cut; nginx’s `send_timeout`.',
  }),
  shutdownTimeout: row({
    type: ms(),
    default: 30000,
    scopes: G,
    since: PORTICO,
    summary: 'How long (ms) a graceful stop or a removed listener waits for in-flight requests.',
  }),
  workers: row({
    type: either(u32(1, 1024), oneOf('auto')),
    default: 'auto',
    scopes: G,
    since: PORTICO,
    summary:
      'How many worker processes serve requests: `auto` is one per CPU Node may use (nginx’s `worker_processes auto`); `1` serves from a single process. With more than one, a primary process holds the configuration, the signals and the admin API, and the workers share the listeners.',
  }),
  clientCertificateCA: row({
    type: str('path'),
    scopes: G,
    since: PORTICO,
    summary:
      'PEM bundle that client certificates must chain to when `useClientCertificate` is true; unset, Node’s trust store (plus `NODE_EXTRA_CA_CERTS`) is used, as Ferron uses the OS store.',
  }),
  maximumRequestBodySize: row({
    type: nullable(u64()),
    default: null,
    scopes: G,
    since: PORTICO,
    summary:
      'Largest request body in bytes (nginx’s `client_max_body_size`): a larger declared `Content-Length` gets 413 before any of it is read, and a body of unknown length gets 413 the moment it passes the bound. Null: no limit (Ferron’s behaviour). It also bounds what a CGI, FastCGI or SCGI request of unknown length writes to a temporary file.',
    example: 'global:\n  maximumRequestBodySize: 10485760\n',
  }),
  followSymlinks: row({
    type: oneOf('ownerMatch', 'always', 'never'),
    default: 'ownerMatch',
    scopes: G,
    since: PORTICO,
    summary:
      'Which symbolic links leaving `wwwroot` static files follow (links that stay inside are always followed): `ownerMatch` when every link on the way has the owner of what it points to (Apache’s SymLinksIfOwnerMatch, nginx’s `disable_symlinks if_not_owner`), `always` (Ferron), `never`. A link not followed is a 404.',
  }),
  automaticTLSDirectoryUrl: row({
    type: str('http-url'),
    scopes: G,
    since: PORTICO,
    summary:
      "ACME directory to use instead of Let's Encrypt's; a private CA's root is trusted through Node's `NODE_EXTRA_CA_CERTS`.",
  }),
  admin: row({
    type: object(
      'admin block',
      {
        listen: {
          spec: listenSpec,
          default: '127.0.0.1:8081',
          summary: 'Address and port of the admin listener (keep it on loopback).',
        },
        health: { spec: flag, default: true, summary: 'Enables `GET /health`.' },
        status: { spec: flag, default: false, summary: 'Enables `GET /status`.' },
        config: { spec: flag, default: false, summary: 'Enables `GET /config`.' },
        reload: { spec: flag, default: true, summary: 'Enables `POST /reload`.' },
        reload_get: { spec: flag, default: true, summary: 'Enables `GET /reload`.' },
        runtime: { spec: flag, default: true, summary: 'Enables `GET /runtime`.' },
        metrics: {
          spec: flag,
          default: false,
          summary:
            'Enables `GET /metrics`: Prometheus text exposition, summed over every worker process.',
        },
        auth_token: {
          spec: str(),
          sensitive: true,
          summary: 'When set, every admin request needs `Authorization: Bearer <token>`.',
        },
      },
      { bareMeansEmpty: true },
    ),
    scopes: G,
    since: PORTICO,
    summary:
      'The admin API: its listener starts only when this block is present. Written without a value (`admin:` in YAML, `admin` in KDL) it is the secure default profile; an endpoint directive without a value (`health:`) means true.',
    example:
      'global:\n  admin:\n    listen: 127.0.0.1:8081\n    health: true\n    status: true\n    auth_token: "{{env.PORTICO_ADMIN_TOKEN}}"\n',
  }),

  // ── structure: hosts hold locations and error configurations ─────────────────────────────────
  locations: row({
    type: section('location'),
    scopes: ['host'],
    since: V1,
    summary:
      'Location objects of the host: the longest matching `path` applies, unless a location with a condition (`pathRegex`, `matchMethods`, `matchHeaders`, `matchQuery`) matches: the first of those, in file order, wins.',
    example:
      'hosts:\n  - domain: example.com\n    locations:\n      - path: /api\n        proxyTo: http://127.0.0.1:3000\n',
  }),
  errorConfig: row({
    type: section('errorConfig'),
    scopes: ['host'],
    since: '1.3.0',
    summary:
      'Error configurations of the host, applied to error responses (all, or those with `scode`).',
    example:
      'hosts:\n  - domain: example.com\n    errorConfig:\n      - scode: 404\n        wwwroot: /var/www/errors\n',
  }),
  path: row({
    type: str('url-path'),
    scopes: ['location'],
    since: V1,
    summary:
      'The location applies when the URL-decoded request path equals it or lies below it. A location with a condition (`pathRegex`, `matchMethods`, `matchHeaders`, `matchQuery`) may leave it out: it then applies to any path its conditions accept.',
  }),
  pathRegex: row({
    type: str('regex'),
    scopes: ['location'],
    since: PORTICO,
    summary:
      'A condition: the location applies when this pattern (Rust `regex` syntax, as in `rewriteMap`) is found in the sanitized, URL-decoded path, without the query. Locations with conditions are tried in file order after the longest prefix is found, and the first whose conditions all hold wins over it (nginx’s order).',
    example:
      'hosts:\n  - domain: example.com\n    wwwroot: /var/www/example\n    locations:\n      - pathRegex: "\\\\.(css|js)$"\n        customHeaders:\n          Cache-Control: "public, max-age=31536000, immutable"\n',
  }),
  matchMethods: row({
    type: list(str('http-method'), { nonEmpty: true, single: true }),
    scopes: ['location'],
    since: PORTICO,
    summary:
      'A condition: the location applies only to requests with one of these methods (case-sensitive; `HEAD` is not `GET`).',
    example:
      'hosts:\n  - domain: example.com\n    locations:\n      - path: /api\n        matchMethods: [POST, PUT, PATCH, DELETE]\n        proxyTo: http://127.0.0.1:3001\n      - path: /api\n        proxyTo: http://127.0.0.1:3000\n',
  }),
  matchHeaders: row({
    type: mapOf('header name', str('regex'), { keyFormat: 'header-name', nonEmpty: true }),
    scopes: ['location'],
    since: PORTICO,
    summary:
      'A condition: each named request header (names compare case-insensitively) is present and its value contains a match of its pattern (Rust `regex` syntax). A header sent several times is matched as Node joins it (`a, b`).',
    example:
      'hosts:\n  - domain: example.com\n    locations:\n      - path: /\n        matchHeaders:\n          X-Canary: "^(1|true)$"\n        proxyTo: http://127.0.0.1:3002\n',
  }),
  matchQuery: row({
    type: mapOf('query parameter', str('regex'), { nonEmpty: true }),
    scopes: ['location'],
    since: PORTICO,
    summary:
      'A condition: each named query parameter is present and one of its URL-decoded values contains a match of its pattern (Rust `regex` syntax; `?debug` has the value "").',
    example:
      'hosts:\n  - domain: example.com\n    locations:\n      - path: /search\n        matchQuery:\n          format: "^json$"\n        proxyTo: http://127.0.0.1:3003\n',
  }),
  scode: row({
    type: statusCode(),
    scopes: ['errorConfig'],
    since: '1.3.0',
    summary: 'When set, the error configuration applies only to errors with that status code.',
  }),

  // ── valid in global, host, location and error configuration scopes ──────────────────────────
  domain: row({
    type: str('domain'),
    scopes: ALL,
    since: V1,
    summary: 'Domain name of a host (`*.example.com` wildcards allowed).',
  }),
  ip: row({
    type: str('ip'),
    scopes: ALL,
    since: V1,
    summary: 'IP address of a host (the local address a connection arrives on).',
  }),
  serverAdministratorEmail: row({
    type: str('email'),
    scopes: ALL,
    since: V1,
    summary: 'Administrator contact, shown only on the default 500 error page.',
  }),
  customHeaders: row({
    type: mapOf('header name', str('header-value'), {
      keyFormat: 'header-name',
      sensitiveKeys: CREDENTIAL_HEADERS,
      sensitiveKeyWords: CREDENTIAL_WORDS,
      forbiddenKeys: NOT_CUSTOM_HEADERS,
    }),
    scopes: ALL,
    since: V1,
    summary:
      'Headers added to responses. `{path}` in a value is replaced with the request URL. Connection-specific headers (`Connection`, `Keep-Alive`, `Proxy-Connection`, `TE`, `Transfer-Encoding`, `Upgrade`, `HTTP2-Settings`) and `Content-Length` are refused.',
    example:
      'global:\n  customHeaders:\n    X-Frame-Options: DENY\n    Link: "<{path}>; rel=canonical"\n',
  }),
  setHeaders: row({
    type: mapOf('header name', str('header-value'), {
      keyFormat: 'header-name',
      sensitiveKeys: CREDENTIAL_HEADERS,
      sensitiveKeyWords: CREDENTIAL_WORDS,
      forbiddenKeys: NOT_CUSTOM_HEADERS,
    }),
    scopes: ALL,
    since: PORTICO,
    summary:
      'Headers set on every response, replacing any of the same name it has (a backend’s, a script’s or the server’s own, `Server` included); `{path}` as in `customHeaders`, and the same names refused. A response’s head is finished in this order: `removeHeaders`, then `setHeaders`, then `customHeaders` where the name is still absent.',
    example:
      'global:\n  setHeaders:\n    X-Content-Type-Options: nosniff\n    Cache-Control: no-store\n',
  }),
  removeHeaders: row({
    type: list(str('header-name'), { single: true }),
    scopes: ALL,
    since: PORTICO,
    summary:
      'Header names removed from every response (a backend’s `X-Powered-By`, say), before `setHeaders` and `customHeaders` are applied. `Server` removes the server’s own `Server` header too, unless `setHeaders` or `customHeaders` names one. `Date` is refused (RFC 9110 §6.6.1: a server with a clock sends it), as are the names `customHeaders` refuses.',
    example: 'global:\n  removeHeaders:\n    - X-Powered-By\n    - Server\n',
  }),
  disableToHTTPSRedirect: row({
    type: bool(),
    default: false,
    scopes: ALL,
    since: V1,
    summary: 'Disables redirects from HTTP to HTTPS.',
  }),
  wwwredirect: row({
    type: bool(),
    default: false,
    scopes: ALL,
    since: V1,
    summary: 'Redirects to the host name beginning with `www.`.',
  }),
  enableIPSpoofing: row({
    type: bool(),
    default: false,
    scopes: ALL,
    since: V1,
    summary:
      'Takes the client IP from `X-Forwarded-For`: from any client unless `trustedProxies` says which peers may send it.',
  }),
  trustedProxies: row({
    type: list(str('ip-or-cidr')),
    scopes: ALL,
    since: PORTICO,
    summary:
      'With `enableIPSpoofing`, the proxies whose `X-Forwarded-For` is believed (addresses and CIDR ranges): the header is read only on connections from them, and the client is its rightmost address that is not one of them (nginx `real_ip_recursive`).',
    example:
      'global:\n  enableIPSpoofing: true\n  trustedProxies:\n    - 127.0.0.1\n    - 10.0.0.0/8\n',
  }),
  allowDoubleSlashes: row({
    type: bool(),
    default: false,
    scopes: ALL,
    since: V1,
    summary: 'Allows double slashes in URLs (URL sanitizer).',
  }),
  rewriteMap: row({
    type: list(
      object('rewrite rule', {
        regex: {
          spec: str('regex'),
          required: true,
          summary:
            'Pattern matched against the path and query, in Rust `regex` syntax as Ferron reads it.',
        },
        replacement: {
          spec: str(),
          required: true,
          summary: 'Replacement for a match; capture groups are `$1` etc.',
        },
        isNotFile: {
          spec: bool(),
          default: false,
          summary: 'Apply only if the path is not a file.',
        },
        isNotDirectory: {
          spec: bool(),
          default: false,
          summary: 'Apply only if the path is not a directory.',
        },
        allowDoubleSlashes: {
          spec: bool(),
          default: false,
          summary: 'Allow double slashes in the rewritten URL.',
        },
        last: {
          spec: bool(),
          default: false,
          summary: 'Stop processing further rules after this one.',
        },
      }),
    ),
    scopes: ALL,
    since: V1,
    summary: 'URL rewrite rules.',
    example:
      'hosts:\n  - domain: example.com\n    rewriteMap:\n      - regex: "^/old/(.*)"\n        replacement: /new/$1\n        last: true\n      - regex: "^/app/(.*)"\n        replacement: /index.php/$1\n        isNotFile: true\n        isNotDirectory: true\n',
  }),
  enableRewriteLogging: row({
    type: bool(),
    default: false,
    scopes: ALL,
    since: V1,
    summary: 'Logs performed URL rewrites to the error log.',
  }),
  wwwroot: row({
    type: str('path'),
    scopes: ALL,
    since: V1,
    summary:
      'Directory static files are served from. The whole request path is looked up under it, in a location too: `location /static` with `wwwroot: /srv/site` serves `/static/app.css` from `/srv/site/static/app.css` (nginx’s `root`, not `alias`).',
  }),
  disableTrailingSlashRedirects: row({
    type: bool(),
    default: false,
    scopes: ALL,
    since: V1,
    summary: 'No redirect to a trailing slash when the path is a directory.',
  }),
  users: row({
    type: list(
      object('user', {
        name: { spec: str(), required: true, aliases: ['user'], summary: 'User name.' },
        pass: {
          spec: str(),
          required: true,
          sensitive: true,
          summary: 'Password hash (PHC string, made by `portico passwd`).',
        },
      }),
    ),
    scopes: ALL,
    since: V1,
    summary: 'Users for HTTP basic authentication.',
    example:
      'global:\n  users:\n    # made by `portico passwd alice`; the password is change-me\n    - name: alice\n      pass: "$argon2id$v=19$m=19456,t=2,p=1$jatcrXK/j9HwQmwvi6X0SA$hIdvJjBANVqJveWsK92Q0bQoSWRKvAPaZy9yF8BnsQc"\n',
  }),
  nonStandardCodes: row({
    type: list(
      object('non-standard code', {
        scode: {
          spec: finalStatusCode(),
          required: true,
          summary:
            'The status code (200–599). 401 enables HTTP basic authentication against `users`; 301, 302, 307 and 308 redirect.',
        },
        url: { spec: str(), summary: 'URL path to match exactly, or URL to redirect to.' },
        regex: {
          spec: str('regex'),
          summary:
            'Pattern searched for in the path and query, in Rust `regex` syntax as Ferron reads it.',
        },
        location: { spec: str('header-value'), summary: 'Redirect location.' },
        realm: { spec: str('header-value'), summary: 'Basic authentication realm.' },
        disableBruteProtection: {
          spec: bool(),
          default: false,
          summary: 'Disables brute-force protection for this code.',
        },
        userList: { spec: list(str()), summary: 'Usernames allowed to access the resource.' },
        users: {
          spec: list(str('ip-or-cidr')),
          summary:
            'The clients (IP addresses or CIDR ranges) this entry applies to; other clients pass it by. It selects, it does not allow: a 403 entry with `users` refuses those clients only.',
        },
      }),
    ),
    scopes: ALL,
    since: V1,
    summary:
      'Non-standard status-code handling: redirects, basic authentication, 403 and other codes.',
    example:
      'hosts:\n  - domain: example.com\n    nonStandardCodes:\n      - scode: 401\n        regex: "^/private(/|$)"\n        realm: Private area\n        userList: [alice]\n      - scode: 301\n        url: /old\n        location: /new\n',
  }),
  respond: row({
    type: object('fixed response', {
      status: {
        spec: finalStatusCode(),
        default: RESPOND_STATUS,
        summary: 'The status code (200–599).',
      },
      body: {
        spec: str(),
        summary: `The body, at most ${RESPOND_BODY_MAX / 1024} KiB in UTF-8; none when absent. A HEAD request gets the head only.`,
      },
      contentType: {
        spec: str('media-type'),
        default: RESPOND_CONTENT_TYPE,
        summary: 'The body’s Content-Type.',
      },
      abort: {
        spec: bool(),
        default: false,
        summary:
          'Close the connection without a response (nginx’s `return 444`); over HTTP/2 the stream is reset with CANCEL and the connection goes on. Goes with no other field.',
      },
    }),
    scopes: ['global', 'host', 'location'],
    replacesParent: true,
    since: PORTICO,
    summary:
      'A fixed response for every request here: a health endpoint, a maintenance page, a blocked path. Answered after the HTTPS and www redirects and the access checks, before `rewriteMap`, `nonStandardCodes` (so before basic authentication, as nginx’s `return` comes before `auth_basic`), the modules and static files. `setHeaders`, `removeHeaders` and `customHeaders` apply. A location’s replaces the host’s whole.',
    example:
      'hosts:\n  - domain: example.com\n    locations:\n      - path: /healthz\n        respond:\n          status: 200\n          body: ok\n      - path: /wp-admin\n        respond:\n          abort: true\n',
  }),
  errorPages: row({
    type: list(
      object('error page', {
        scode: { spec: statusCode(), required: true, summary: 'Status code.' },
        path: {
          spec: str('path'),
          required: true,
          summary:
            'The page file; a relative path is relative to the directory of the configuration file that holds it.',
        },
      }),
    ),
    scopes: ALL,
    since: V1,
    summary: 'Custom error pages.',
    example: 'global:\n  errorPages:\n    - scode: 404\n      path: /var/www/errors/404.html\n',
  }),
  enableETag: row({
    type: bool(),
    default: true,
    scopes: ALL,
    since: V1,
    summary: 'Generates ETag headers.',
  }),
  enableCompression: row({
    type: bool(),
    default: true,
    scopes: ALL,
    since: V1,
    summary:
      'Compresses responses of text types, JSON, JavaScript, XML, SVG, WebAssembly and fonts other than WOFF (br, zstd where Node has it, gzip, deflate, as `Accept-Encoding` ranks them): static files, and proxied, cached, FastCGI, CGI, SCGI and Python responses as they stream (docs/running.md, "Compressing dynamic responses"); serves precompressed `.br`/`.gz` files found beside the file asked for.',
  }),
  enableDirectoryListing: row({
    type: bool(),
    default: false,
    scopes: ALL,
    since: V1,
    summary: 'Lists directory contents when a directory without index file is requested.',
  }),
  indexFiles: row({
    type: list(str('file-name'), { single: true }),
    default: ['index.html', 'index.htm', 'index.xhtml'],
    scopes: ALL,
    replacesParent: true,
    since: PORTICO,
    summary:
      'The files served for a directory, the first that exists winning (nginx’s `index`); an empty list serves none. A host’s or location’s list replaces the inherited one.',
    example: 'global:\n  indexFiles:\n    - index.html\n    - default.htm\n',
  }),
  mimeTypes: row({
    type: mapOf('file extension', str('media-type'), { keyFormat: 'file-extension' }),
    scopes: ALL,
    since: PORTICO,
    summary:
      'Content-Type by file extension (`.wasm`, with its dot; compared case-insensitively; the last extension of a name counts), added to or overriding the built-in table of the `mime-types` package. The type is sent as written: a text type wants its `; charset=utf-8`.',
    example:
      'global:\n  mimeTypes:\n    .webmanifest: application/manifest+json\n    .log: "text/plain; charset=utf-8"\n',
  }),

  // ── read by what several modules share: the backend pools (src/upstream/) and the gateways'
  // time limits (src/gateway/timeouts.ts), so core rows that name their modules ────────────────
  proxyMaxConnections: row({
    type: u32(1),
    default: 128,
    scopes: G,
    module: 'rproxy',
    since: PORTICO,
    summary:
      'Requests in flight to one backend at once (over HTTP/1.1 one connection each; over HTTP/2 as streams of as few connections as hold them); further requests wait in its queue.',
  }),
  proxyMaxConnectionsPerClient: row({
    type: u32(1),
    default: 32,
    scopes: G,
    module: 'rproxy',
    since: PORTICO,
    summary:
      'Of those, how many one client connection may hold (an HTTP/2 connection carries many requests); its further requests wait their turn, so one client cannot take a backend.',
  }),
  proxyQueueLimit: row({
    type: u32(),
    default: 1024,
    scopes: G,
    module: 'rproxy',
    since: PORTICO,
    summary:
      'Requests that may wait for a connection to one backend; beyond, 503 with `Retry-After`.',
  }),
  proxyQueueTimeout: row({
    type: ms(1),
    default: 10000,
    scopes: G,
    module: 'rproxy',
    since: PORTICO,
    summary:
      'How long (ms) a request may wait for a connection to its backend; beyond, 503 with `Retry-After`.',
  }),
  proxyConnectTimeout: row({
    type: ms(1),
    default: 10000,
    scopes: G,
    module: ['rproxy', 'fauth', 'fcgi', 'scgi'],
    since: PORTICO,
    summary:
      'How long (ms) connecting to a backend or to a FastCGI or SCGI application may take; beyond, 504. (A CGI script or a Python process has no connection to wait for.)',
  }),
  proxyResponseTimeout: row({
    type: ms(1),
    default: 60000,
    scopes: G,
    module: ['rproxy', 'fauth', 'fcgi', 'scgi', 'cgi', 'wsgi', 'wsgid', 'asgi'],
    since: PORTICO,
    summary:
      'How long (ms) any backend or gateway (proxied server, FastCGI, SCGI or Python application, CGI script) may take to send its response head once the request is sent; beyond, 504 and an error-log line naming it. A CGI script is killed; a Python application is told to stop, and its process replaced if it does not.',
  }),
  proxyIdleTimeout: row({
    type: ms(1),
    default: 300000,
    scopes: G,
    module: ['rproxy', 'fauth', 'fcgi', 'scgi', 'cgi', 'wsgi', 'wsgid', 'asgi'],
    since: PORTICO,
    summary:
      'How long (ms) the response body of any backend or gateway may pause between two pieces; beyond, the response is cut and the error log says so (a stream such as Server-Sent Events must send something more often). Time a slow client takes does not count.',
  }),
} as const satisfies PropertyRows;

type SettingName<Rows extends PropertyRows> = {
  [K in keyof Rows]: Rows[K]['type'] extends SectionSpec ? never : K;
}[keyof Rows];

/** The settings of rows, as validated: only what the file sets (defaults live in the rows). */
export type SettingsOf<Rows extends PropertyRows> = {
  -readonly [K in SettingName<Rows>]?: Infer<Rows[K]['type']>;
};

/** The core settings of one scope; a module reads its own through `SettingsOf` its rows. */
export type Settings = SettingsOf<typeof CORE_PROPERTIES>;
