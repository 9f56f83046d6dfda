// The series read from what modules show in /status, at each scrape: the HTTP cache's hits,
// misses, stores, evictions and what it holds, each proxy backend's requests, errors and health,
// and the Python processes alive and replaced. Backends are labelled with their configured URL (credentials redacted), a bounded set.
// With workers, counts are this process's and are summed; what every worker reads from the same
// shared store (what the cache holds, a backend's health) is taken once, not summed.
import { Counter, Gauge, type Registry } from 'prom-client';

/** plan.moduleStatus(): each module's status objects, one per provisioned use. */
export type ModuleStatus = () => Readonly<Record<string, readonly unknown[]>>;

interface CacheStatus {
  readonly entries: number;
  readonly bytes: number;
  readonly evictions: number;
  readonly hits: number;
  readonly misses: number;
  readonly stores: number;
}

interface PythonStatus {
  readonly processes: readonly unknown[];
  readonly restarts: number;
  /** A worker's connections to the primary's processes: those are counted by the primary. */
  readonly hosted?: boolean;
}

const PYTHON_MODULES = ['wsgi', 'wsgid', 'asgi'] as const;

interface BackendStatus {
  readonly url: string;
  readonly healthy: boolean;
  readonly requests: number;
  readonly errors: number;
}

export function moduleMetrics(registry: Registry, status: ModuleStatus): void {
  const registers = [registry];
  const caches = () => (status().cache ?? []) as readonly CacheStatus[];
  const sum = (field: keyof CacheStatus) => caches().reduce((n, c) => n + c[field], 0);
  // A count that only grows, read whole at each scrape.
  const total = (name: string, help: string, read: () => number) =>
    new Counter({
      name,
      help,
      registers,
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  total('portico_cache_hits_total', 'Requests answered from the HTTP cache.', () => sum('hits'));
  total('portico_cache_misses_total', 'Requests the HTTP cache sent on.', () => sum('misses'));
  total('portico_cache_stores_total', 'Responses the HTTP cache stored.', () => sum('stores'));
  total('portico_cache_evictions_total', 'Stored responses pushed out by the bounds.', () =>
    sum('evictions'),
  );
  const held = (name: string, help: string, field: 'entries' | 'bytes') =>
    new Gauge({
      name,
      help,
      registers,
      aggregator: 'max',
      collect() {
        this.set(Math.max(0, ...caches().map((c) => c[field])));
      },
    });
  held('portico_cache_entries', 'Responses the HTTP cache holds.', 'entries');
  held('portico_cache_bytes', 'Bytes the HTTP cache holds.', 'bytes');

  // A backend named by several locations shares one pool: each appears once.
  const backends = () => {
    const byUrl = new Map<string, BackendStatus>();
    for (const proxy of (status().rproxy ?? []) as { backends: BackendStatus[] }[])
      for (const b of proxy.backends) {
        const seen = byUrl.get(b.url);
        byUrl.set(b.url, seen === undefined ? b : { ...seen, healthy: seen.healthy && b.healthy });
      }
    return [...byUrl.values()];
  };
  const perBackend = (name: string, help: string, field: 'requests' | 'errors') =>
    new Counter({
      name,
      help,
      labelNames: ['backend'],
      registers,
      collect() {
        this.reset();
        for (const b of backends()) this.inc({ backend: b.url }, b[field]);
      },
    });
  perBackend('portico_upstream_requests_total', 'Requests sent to a proxy backend.', 'requests');
  perBackend(
    'portico_upstream_errors_total',
    'Requests to a proxy backend that failed before its response ended.',
    'errors',
  );
  // Each process counts the Python processes it runs (with workers, the primary those of wsgi and
  // asgi, each worker its wsgid ones): summed, every process once.
  const own = (module: string) =>
    ((status()[module] ?? []) as readonly PythonStatus[]).filter((p) => p.hosted !== true);
  new Gauge({
    name: 'portico_gateway_processes',
    help: 'Python application processes alive, by module.',
    labelNames: ['module'],
    registers,
    collect() {
      this.reset();
      for (const module of PYTHON_MODULES) {
        const alive = own(module).flatMap((p) => p.processes.filter((x) => x !== null));
        if (alive.length > 0) this.set({ module }, alive.length);
      }
    },
  });
  new Counter({
    name: 'portico_gateway_restarts_total',
    help: 'Python application processes replaced after dying or being stuck, by module.',
    labelNames: ['module'],
    registers,
    collect() {
      this.reset();
      for (const module of PYTHON_MODULES) {
        const pools = own(module);
        if (pools.length > 0)
          this.inc(
            { module },
            pools.reduce((n, p) => n + p.restarts, 0),
          );
      }
    },
  });
  new Gauge({
    name: 'portico_upstream_healthy',
    help: 'Whether a proxy backend is taken (1) or skipped for its recent failures (0).',
    labelNames: ['backend'],
    registers,
    aggregator: 'min',
    collect() {
      this.reset();
      for (const b of backends()) this.set({ backend: b.url }, b.healthy ? 1 : 0);
    },
  });
}
