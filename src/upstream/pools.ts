// Keep-alive connection pools, one per backend origin and certificate policy, leased by the Plans
// that use them: a reload that keeps a backend keeps its warm connections, and rproxy and fauth
// share one pool per origin.
import type { Pool } from 'undici';
import type { Leases } from '../plan/resources.js';
import type { Backend } from './backend.js';
import { loadUndici } from './undici.js';

/** Connections per backend at most: requests beyond wait in the pool's queue. */
const CONNECTIONS_PER_BACKEND = 128;
// A backend that accepts no connection in this time gets a 504 (nginx's proxy_connect_timeout is 60 s).
const CONNECT_TIMEOUT_MS = 10_000;
// Between two pieces of a response body: a stream (Server-Sent Events) quieter than this is cut.
const BODY_TIMEOUT_MS = 300_000;

export interface PoolPolicy {
  /** Backend certificates are checked against Node's trust store (plus NODE_EXTRA_CA_CERTS). */
  readonly verify: boolean;
  /** Time to the response head; the global `timeout` (REFERENCE §13) usually ends it first. */
  readonly headersTimeoutMs: number;
}

export function leasePool(leases: Leases, backend: Backend, policy: PoolPolicy): Pool {
  const key = `upstream:${backend.origin} verify=${policy.verify} head=${policy.headersTimeoutMs}`;
  return leases.take(
    key,
    () =>
      new (loadUndici().Pool)(backend.origin, {
        connections: CONNECTIONS_PER_BACKEND,
        headersTimeout: policy.headersTimeoutMs,
        bodyTimeout: BODY_TIMEOUT_MS,
        connect: {
          timeout: CONNECT_TIMEOUT_MS,
          rejectUnauthorized: policy.verify,
          ...(backend.secure && backend.servername ? { servername: backend.servername } : {}),
        },
      }),
  );
}
