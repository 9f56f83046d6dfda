// The metrics a process keeps for `/metrics` (prom-client), made only when the admin block turns
// `metrics` on: requests by host, method and status class, their duration, body bytes sent, open
// connections and what modules show (module-metrics.ts) in a serving process; reloads and their
// outcome and certificate expiry in the process that reloads and orders (a single server, or the
// primary); and every process's own CPU, memory and event-loop delay, labelled with which process
// it is. No label takes its value from the request: the host is the configured `domain` that
// answered ("*": none), the method one of a fixed list, the status a class.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ManagedStatus } from '../tls/acme-manager.js';
import { moduleMetrics, type ModuleStatus } from './module-metrics.js';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'CONNECT']);
// Seconds: a static hit takes well under a millisecond, a slow backend up to its timeouts.
const DURATION_BUCKETS = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
];

export interface FinishedRequest {
  /** The configured domain of the host that answered, or undefined when none matched. */
  readonly host: string | undefined;
  readonly method: string;
  readonly status: number;
  readonly seconds: number;
  readonly bytesSent: number;
}

export interface MetricSources {
  /** Client connections open (a serving process). */
  readonly connections?: () => number;
  /** Bytes received from and sent to clients on the wire, since the process started. */
  readonly traffic?: () => { readonly received: number; readonly sent: number };
  /** The names automatic TLS manages (the process that orders). */
  readonly certificates?: () => readonly ManagedStatus[];
  /** What the current Plan's modules show (a serving process): module-metrics.ts. */
  readonly modules?: ModuleStatus;
}

export class ServerMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'host' | 'method' | 'status'>;
  private readonly duration: Histogram<'host'>;
  private readonly bytesSent: Counter<'host'>;
  private readonly reloads: Counter<'outcome'>;

  /** `process`: this process among the server's ("server", "worker 2", "primary"). */
  constructor(process: string, sources: MetricSources) {
    const registers = [this.registry];
    this.requests = new Counter({
      name: 'portico_http_requests_total',
      help: 'Requests answered, by host, method and status class.',
      labelNames: ['host', 'method', 'status'],
      registers,
    });
    this.duration = new Histogram({
      name: 'portico_http_request_duration_seconds',
      help: 'Time from the request head to the end of the response.',
      labelNames: ['host'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.bytesSent = new Counter({
      name: 'portico_http_response_body_bytes_total',
      help: 'Response body bytes sent.',
      labelNames: ['host'],
      registers,
    });
    this.reloads = new Counter({
      name: 'portico_reloads_total',
      help: 'Configuration reloads asked for, by outcome (applied or refused).',
      labelNames: ['outcome'],
      registers,
    });
    const { connections, traffic, certificates, modules } = sources;
    if (modules) moduleMetrics(this.registry, modules);
    if (traffic)
      for (const [field, what] of [
        ['received', 'received from'],
        ['sent', 'sent to'],
      ] as const)
        new Counter({
          name: `portico_connection_${field}_bytes_total`,
          help: `Bytes ${what} clients on the wire, TLS records included.`,
          registers,
          collect() {
            this.reset();
            this.inc(traffic()[field]);
          },
        });
    if (connections)
      new Gauge({
        name: 'portico_connections_active',
        help: 'Client connections open.',
        registers,
        collect() {
          this.set(connections());
        },
      });
    if (certificates)
      new Gauge({
        name: 'portico_certificate_expiry_timestamp_seconds',
        help: 'When the certificate automatic TLS holds for a name expires (Unix time).',
        labelNames: ['name'],
        registers,
        collect() {
          this.reset();
          for (const c of certificates())
            if (c.expires !== null) this.set({ name: c.name }, Date.parse(c.expires) / 1000);
        },
      });
    collectDefaultMetrics({ register: this.registry, labels: { process } });
  }

  reloaded(applied: boolean): void {
    this.reloads.inc({ outcome: applied ? 'applied' : 'refused' });
  }

  observe(r: FinishedRequest): void {
    const host = r.host ?? '*';
    const method = METHODS.has(r.method) ? r.method : 'other';
    this.requests.inc({ host, method, status: `${Math.floor(r.status / 100)}xx` });
    this.duration.observe({ host }, r.seconds);
    this.bytesSent.inc({ host }, r.bytesSent);
  }
}
