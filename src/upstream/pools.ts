// Keep-alive connection pools, one per backend origin and policy, each behind the gate that admits
// requests to it, leased by the Plans that use them: a reload that keeps a backend keeps its warm
// connections, and rproxy and fauth share one pool per origin.
import type { Pool } from 'undici';
import type { ResolvedSettings } from '../config/defaults.js';
import type { Leases } from '../plan/resources.js';
import type { Backend } from './backend.js';
import { BackendGate, type GateLimits } from './gate.js';
import { loadUndici } from './undici.js';

export interface PoolPolicy {
  /** Backend certificates are checked against Node's trust store (plus NODE_EXTRA_CA_CERTS). */
  readonly verify: boolean;
  readonly connectTimeoutMs: number;
  /** From the request sent to the response head. */
  readonly responseTimeoutMs: number;
  /** Between two pieces of a response body. */
  readonly idleTimeoutMs: number;
  readonly gate: GateLimits;
}

/** A backend's pool and its gate: every request passes the gate before it takes a connection. */
export interface Upstream {
  readonly pool: Pool;
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

/** `verify`: whether the backend's TLS certificate is checked. */
export function poolPolicy(
  s: ResolvedSettings,
  { verify }: { readonly verify: boolean },
): PoolPolicy {
  return {
    verify,
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
    `upstream:${backend.origin} verify=${policy.verify} connect=${policy.connectTimeoutMs}` +
    ` head=${policy.responseTimeoutMs} idle=${policy.idleTimeoutMs} connections=${gate.connections}` +
    ` share=${gate.perClient} queue=${gate.queue} wait=${gate.waitMs}`;
  return leases.take(key, () => {
    const pool = new (loadUndici().Pool)(backend.origin, {
      // The gate admits no more than this, so the pool's own unbounded queue stays empty.
      connections: gate.connections,
      headersTimeout: policy.responseTimeoutMs,
      bodyTimeout: policy.idleTimeoutMs,
      connect: {
        timeout: policy.connectTimeoutMs,
        rejectUnauthorized: policy.verify,
        ...(backend.secure && backend.servername ? { servername: backend.servername } : {}),
      },
    });
    const counts = { requests: 0, errors: 0 };
    return { pool, gate: new BackendGate(gate, backend.shown), counts, close: () => pool.close() };
  });
}
