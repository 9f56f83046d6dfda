// The rproxy module's own rows of the property table (config/properties.ts explains the columns).
// The pool limits and time limits it shares with fauth and the gateways are core rows.
import { GLOBAL_ONLY, SCOPES, row, type PropertyRows } from '../../config/properties.js';
import { bool, list, str, u32 } from '../../config/types.js';

const proxyTargets = list(str('backend-url'), { nonEmpty: true, single: true });

export const RPROXY_PROPERTIES = {
  loadBalancerHealthCheckWindow: row({
    type: u32(),
    default: 5000,
    scopes: GLOBAL_ONLY,
    since: '1.0.0',
    summary: 'Window in ms between failed-connection reports made by a load balancer.',
    listedAfter: 'enableHTTP3',
  }),
  proxyTo: row({
    type: proxyTargets,
    scopes: SCOPES,
    replacesParent: true,
    since: '1.0.0',
    summary:
      'Base URL(s) to proxy to. With an array, requests are distributed among them. `http://host:port` and `https://host:port` speak HTTP/1.1 (HTTPS: HTTP/2 by ALPN with `proxyHTTP2`); `h2c://host:port` speaks HTTP/2 without TLS, with prior knowledge (a gRPC server). A Unix socket: `unix:/run/app.sock` (or `unix:///run/app.sock`), nginx’s `http://unix:/run/app.sock:/base`, or `http+unix://%2Frun%2Fapp.sock/base` (the path percent-encoded); `h2c+unix://%2Frun%2Fapp.sock` for HTTP/2 over one. The socket’s path is absolute, at most 107 bytes; a backend on a socket receives `Host: localhost`. A socket missing when a request comes is a 502 and an error-log line. A path in the URL is a base path: the request’s path is appended to it (`http://b:5000/app/` + `/x?y` → `/app/x?y`), the URL’s own query dropped.',
    example:
      'global:\n  loadModules: [rproxy]\nhosts:\n  - domain: api.example.com\n    proxyTo:\n      - http://127.0.0.1:3000\n      - http://127.0.0.1:3001\n  - domain: app.example.com\n    proxyTo: unix:/run/app/app.sock\n  - domain: grpc.example.com\n    proxyTo: h2c://127.0.0.1:50051\n',
    listedAfter: 'enableDirectoryListing',
  }),
  secureProxyTo: row({
    type: proxyTargets,
    scopes: SCOPES,
    replacesParent: true,
    since: '1.0.0',
    summary: 'As `proxyTo`, used when the client connected over HTTPS.',
  }),
  proxyHTTP2: row({
    type: bool(),
    default: false,
    scopes: SCOPES,
    since: 'Portico',
    summary:
      'HTTPS backends are offered HTTP/2 by ALPN, as Caddy does (nginx and Ferron speak HTTP/1.1 only): one that accepts it carries many requests on one connection, gRPC with its trailers; one that chooses HTTP/1.1 is spoken to in HTTP/1.1 from then on. For HTTP/2 without TLS, write the backend as `h2c://`.',
    example:
      'global:\n  loadModules: [rproxy]\nhosts:\n  - domain: grpc.example.com\n    proxyTo: https://10.0.0.5:8443\n    proxyHTTP2: true\n',
  }),
  enableLoadBalancerHealthCheck: row({
    type: bool(),
    default: false,
    scopes: SCOPES,
    since: '1.0.0',
    summary:
      'Passive health checks: a backend with too many failed connections is temporarily not chosen.',
    listedAfter: 'forwardedAuthCopyHeaders',
  }),
  loadBalancerHealthCheckMaximumFails: row({
    type: u32(),
    default: 3,
    scopes: SCOPES,
    since: '1.0.0',
    summary: 'Failures before a backend is marked bad.',
  }),
  disableProxyCertificateVerification: row({
    type: bool(),
    default: false,
    scopes: SCOPES,
    since: '1.0.0',
    summary: 'Skips backend certificate verification (not for production).',
    listedAfter: 'proxyIdleTimeout',
  }),
  proxyInterceptErrors: row({
    type: bool(),
    default: false,
    scopes: SCOPES,
    since: '1.3.0',
    summary: 'A backend error response is passed to the error handler with the same status code.',
    listedAfter: 'asgiPath',
  }),
  disableProxyXForwarded: row({
    type: bool(),
    default: false,
    scopes: SCOPES,
    since: '1.3.6',
    summary: 'Disables `X-Forwarded-*` headers toward backends.',
  }),
} as const satisfies PropertyRows;
