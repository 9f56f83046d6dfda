// The reverse proxy (`rproxy`, REFERENCE §14 with CONTRACT point 10): `proxyTo` / `secureProxyTo`
// backends (over TCP or Unix sockets, HTTP/1.1 or HTTP/2) chosen at random among healthy ones,
// keep-alive pools shared across Plans and with fauth, a connection that fails before any request
// byte retried on another backend, and the 502/503/504 mapping.
import { defineModule, type ModuleSettings } from '../../plan/module.js';
import { parseBackend } from '../../upstream/backend.js';
import { HealthBook } from '../../upstream/health.js';
import { leaseUpstream, poolPolicy } from '../../upstream/pools.js';
import type { PoolPolicy } from '../../upstream/transport.js';
import { checkBackendUrls } from './check.js';
import { proxyStage, type ProxyRoute } from './proxy-stage.js';
import { RPROXY_PROPERTIES } from './properties.js';

export interface RproxyOptions {
  readonly proxyTo: readonly string[] | undefined;
  readonly secureProxyTo: readonly string[] | undefined;
  readonly interceptErrors: boolean;
  readonly xForwarded: boolean;
  readonly health: { readonly maximumFails: number; readonly windowMs: number } | undefined;
  readonly pools: PoolPolicy;
}

function options(s: ModuleSettings<typeof RPROXY_PROPERTIES>): RproxyOptions | undefined {
  if (s.proxyTo === undefined && s.secureProxyTo === undefined) return undefined;
  return {
    proxyTo: s.proxyTo,
    secureProxyTo: s.secureProxyTo,
    interceptErrors: s.proxyInterceptErrors,
    xForwarded: !s.disableProxyXForwarded,
    health: s.enableLoadBalancerHealthCheck
      ? {
          maximumFails: s.loadBalancerHealthCheckMaximumFails,
          windowMs: s.loadBalancerHealthCheckWindow,
        }
      : undefined,
    pools: poolPolicy(s, { verify: !s.disableProxyCertificateVerification, http2: s.proxyHTTP2 }),
  };
}

export const rproxy = defineModule({
  name: 'rproxy',
  properties: RPROXY_PROPERTIES,
  check: checkBackendUrls,
  options,
  provision: (o, leases, { errorLog, store }) => {
    const book = new HealthBook(store);
    const route = (urls: readonly string[] | undefined): ProxyRoute | undefined => {
      if (urls === undefined) return undefined;
      const backends = urls.map(parseBackend);
      return {
        backends,
        upstreams: new Map(backends.map((b) => [b, leaseUpstream(leases, b, o.pools)])),
      };
    };
    const plain = route(o.proxyTo);
    const secure = route(o.secureProxyTo) ?? plain;
    const health = o.health && { book, ...o.health };
    const upstreams = new Map([...(plain?.upstreams ?? []), ...(secure?.upstreams ?? [])]);
    return {
      stage: proxyStage({
        plain,
        secure,
        health,
        interceptErrors: o.interceptErrors,
        xForwarded: o.xForwarded,
        errorLog,
      }),
      status: () => ({
        backends: [...upstreams].map(([b, { gate, counts }]) => {
          const failures = book.failures(b, o.health?.windowMs ?? 0);
          return {
            url: b.shown,
            healthy: o.health === undefined || failures <= o.health.maximumFails,
            failures,
            inFlight: gate.inFlight,
            queued: gate.queued,
            ...counts,
          };
        }),
      }),
    };
  },
});
