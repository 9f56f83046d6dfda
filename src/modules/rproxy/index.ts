// The reverse proxy (`rproxy`, REFERENCE §14 with CONTRACT point 10): `proxyTo` / `secureProxyTo`
// backends chosen at random among healthy ones, keep-alive pools shared across Plans and with
// fauth, a connection that fails before any request byte retried on another backend, and the
// 502/503/504 mapping.
import type { ResolvedSettings } from '../../config/defaults.js';
import { defineModule } from '../../plan/module.js';
import { parseBackend } from '../../upstream/backend.js';
import { HealthBook } from '../../upstream/health.js';
import { leasePool } from '../../upstream/pools.js';
import { checkBackendUrls } from './check.js';
import { proxyStage, type ProxyRoute } from './proxy-stage.js';

export interface RproxyOptions {
  readonly proxyTo: readonly string[] | undefined;
  readonly secureProxyTo: readonly string[] | undefined;
  readonly interceptErrors: boolean;
  readonly xForwarded: boolean;
  readonly verify: boolean;
  readonly health: { readonly maximumFails: number; readonly windowMs: number } | undefined;
  readonly headersTimeoutMs: number;
}

// With `timeout: null` the wait for a response head still ends (undici's own default).
const HEADERS_TIMEOUT_MS = 300_000;

function options(s: ResolvedSettings): RproxyOptions | undefined {
  if (s.proxyTo === undefined && s.secureProxyTo === undefined) return undefined;
  return {
    proxyTo: s.proxyTo,
    secureProxyTo: s.secureProxyTo,
    interceptErrors: s.proxyInterceptErrors,
    xForwarded: !s.disableProxyXForwarded,
    verify: !s.disableProxyCertificateVerification,
    health: s.enableLoadBalancerHealthCheck
      ? {
          maximumFails: s.loadBalancerHealthCheckMaximumFails,
          windowMs: s.loadBalancerHealthCheckWindow,
        }
      : undefined,
    // The global `timeout` resets the client first (REFERENCE §13); this bounds a backend's wait past it.
    headersTimeoutMs: s.timeout === null ? HEADERS_TIMEOUT_MS : s.timeout + 1000,
  };
}

export const rproxy = defineModule<RproxyOptions>({
  name: 'rproxy',
  check: checkBackendUrls,
  options,
  provision: (o, leases, { errorLog }) => {
    const book = leases.take('upstream:health', () => new HealthBook());
    const route = (urls: readonly string[] | undefined): ProxyRoute | undefined => {
      if (urls === undefined) return undefined;
      const backends = urls.map(parseBackend);
      const policy = { verify: o.verify, headersTimeoutMs: o.headersTimeoutMs };
      return { backends, pools: new Map(backends.map((b) => [b, leasePool(leases, b, policy)])) };
    };
    const plain = route(o.proxyTo);
    const secure = route(o.secureProxyTo) ?? plain;
    const health = o.health && { book, ...o.health };
    const all = [...new Set([...(plain?.backends ?? []), ...(secure?.backends ?? [])])];
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
        backends: all.map((b) => {
          const failures = book.failures(b, o.health?.windowMs ?? 0);
          return {
            url: b.shown,
            healthy: o.health === undefined || failures <= o.health.maximumFails,
            failures,
          };
        }),
      }),
    };
  },
});
