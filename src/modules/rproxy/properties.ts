// The rproxy module's own rows of the property table (config/properties.ts explains the columns).
// The pool limits and time limits it shares with fauth and the gateways are core rows.
import { GLOBAL_ONLY, SCOPES, row, type PropertyRows } from '../../config/properties.js';
import { bool, list, str, u32 } from '../../config/types.js';

const proxyTargets = list(str('http-url'), { nonEmpty: true, single: true });

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
      'Base URL(s) to proxy to (HTTP or HTTPS). With an array, requests are distributed among them.',
    example:
      'global:\n  loadModules: [rproxy]\nhosts:\n  - domain: api.example.com\n    proxyTo:\n      - http://127.0.0.1:3000\n      - http://127.0.0.1:3001\n',
    listedAfter: 'enableDirectoryListing',
  }),
  secureProxyTo: row({
    type: proxyTargets,
    scopes: SCOPES,
    replacesParent: true,
    since: '1.0.0',
    summary: 'As `proxyTo`, used when the client connected over HTTPS.',
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
