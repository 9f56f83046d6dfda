// What a finished request feeds: the access log and the metrics. The request handler adds its
// per-request 'close' listener only when one of them is there, and prom-client is loaded only by a
// process whose configuration turns metrics on.
import type { Registry } from 'prom-client';
import type { MetricSources, ServerMetrics } from '../metrics/server-metrics.js';
import type { Plan } from '../plan/compile.js';
import type { AccessRecord, RequestHandler } from './request-handler.js';
import { accessEntry } from './server-logs.js';

export class FinishedRequests {
  /** Made the first time a configuration turns `metrics` on, and kept. */
  private metrics: ServerMetrics | undefined;

  constructor(
    private readonly handler: RequestHandler,
    /** This process among the server's, for the metrics' `process` label. */
    private readonly processName: string,
    private readonly sources: MetricSources,
  ) {}

  /** Before a configuration serves: its admin block's `metrics` made ready. */
  async prepare(admin: { readonly metrics?: boolean } | undefined): Promise<void> {
    if (admin?.metrics !== true || this.metrics !== undefined) return;
    const { ServerMetrics } = await import('../metrics/server-metrics.js');
    this.metrics ??= new ServerMetrics(this.processName, this.sources);
  }

  /** After the start and each reload: the access logs of the Plan's sites; metrics once prepared. */
  follow(plan: Plan): void {
    const metrics = this.metrics;
    this.handler.onDone =
      !plan.logs.logsRequests && metrics === undefined
        ? undefined
        : (record) => {
            // The site the request was routed to, in the Plan it began with.
            const access = record.site.logs.access;
            if (access !== undefined) access.log(accessEntry(record, access.extended));
            metrics?.observe(finishedRequest(record));
          };
  }

  reloaded(applied: boolean): void {
    this.metrics?.reloaded(applied);
  }

  get registry(): Registry | undefined {
    return this.metrics?.registry;
  }
}

/** What the metrics count of a finished request. */
function finishedRequest({ ctx }: AccessRecord) {
  return {
    host: ctx.resolved?.host?.settings.domain,
    method: ctx.method,
    status: ctx.status ?? 0,
    seconds: (Date.now() - ctx.startedAt) / 1000,
    bytesSent: ctx.length ?? 0,
  };
}
