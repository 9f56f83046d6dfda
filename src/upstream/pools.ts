// Keep-alive connection pools, one per backend origin and policy, each behind the gate that admits
// requests to it, leased by the Plans that use them: a reload that keeps a backend keeps its warm
// connections, and rproxy and fauth share one pool per origin. HTTP/1.1 (over TCP, TLS or a Unix
// socket) is undici's Pool; h2c, and HTTPS under `proxyHTTP2`, the HTTP/2 session pool.
import type { ResolvedSettings } from '../config/defaults.js';
import type { Leases } from '../plan/resources.js';
import { AlpnUpstream } from './alpn-upstream.js';
import type { Backend } from './backend.js';
import { BackendGate } from './gate.js';
import { Http2Pool } from './http2-pool.js';
import type { PoolPolicy, UpstreamDispatcher } from './transport.js';
import { loadUndici } from './undici.js';

/** A backend's pool and its gate: every request passes the gate before it takes a connection. */
export interface Upstream {
  readonly pool: UpstreamDispatcher;
  readonly gate: BackendGate;
  /** What went to it through this process since it started (for /status and /metrics). */
  readonly counts: UpstreamCounts;
}

export interface UpstreamCounts {
  /** Requests sent, each attempt counted. */
  requests: number;
  /** Attempts that failed: no connection, or the exchange broke before the response ended. */
  errors: number;
}

/** `verify`: whether the backend's TLS certificate is checked; `http2`: `proxyHTTP2`. */
export function poolPolicy(
  s: ResolvedSettings,
  { verify, http2 = false }: { readonly verify: boolean; readonly http2?: boolean },
): PoolPolicy {
  return {
    verify,
    http2,
    connectTimeoutMs: s.proxyConnectTimeout,
    responseTimeoutMs: s.proxyResponseTimeout,
    idleTimeoutMs: s.proxyIdleTimeout,
    gate: {
      connections: s.proxyMaxConnections,
      perClient: s.proxyMaxConnectionsPerClient,
      queue: s.proxyQueueLimit,
      waitMs: s.proxyQueueTimeout,
    },
  };
}

export function leaseUpstream(leases: Leases, backend: Backend, policy: PoolPolicy): Upstream {
  const { gate } = policy;
  const key =
    `upstream:${backend.origin} verify=${policy.verify} h2=${policy.http2} connect=${policy.connectTimeoutMs}` +
    ` head=${policy.responseTimeoutMs} idle=${policy.idleTimeoutMs} connections=${gate.connections}` +
    ` share=${gate.perClient} queue=${gate.queue} wait=${gate.waitMs}`;
  return leases.take(key, () => {
    const pool = transport(backend, policy);
    const counts = { requests: 0, errors: 0 };
    return { pool, gate: new BackendGate(gate, backend.shown), counts, close: () => pool.close() };
  });
}

function transport(backend: Backend, policy: PoolPolicy): UpstreamDispatcher {
  if (backend.protocol === 'h2c') return new Http2Pool(backend, policy);
  if (backend.secure && policy.http2)
    return new AlpnUpstream(backend, policy, () => http1Pool(backend, policy));
  return http1Pool(backend, policy);
}

function http1Pool(backend: Backend, policy: PoolPolicy): UpstreamDispatcher {
  const socketPath = backend.socketPath;
  return new (loadUndici().Pool)(socketPath === undefined ? backend.origin : 'http://localhost', {
    // The gate admits no more than this, so the pool's own unbounded queue stays empty.
    connections: policy.gate.connections,
    headersTimeout: policy.responseTimeoutMs,
    bodyTimeout: policy.idleTimeoutMs,
    ...(socketPath === undefined ? {} : { socketPath }),
    connect: {
      timeout: policy.connectTimeoutMs,
      rejectUnauthorized: policy.verify,
      ...(backend.secure && backend.servername ? { servername: backend.servername } : {}),
    },
  });
}
