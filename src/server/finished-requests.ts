// What a finished request feeds: the access log and the metrics. The request handler adds its
// per-request 'close' listener only when one of them is there.
import type { Registry } from 'prom-client';
import type { AccessLog } from '../log/access-log.js';
import { ServerMetrics, type MetricSources } from '../metrics/server-metrics.js';
import type { RequestHandler } from './request-handler.js';
import { accessEntry, finishedRequest } from './server-logs.js';

export class FinishedRequests {
  /** Made the first time a configuration turns `metrics` on, and kept. */
  private metrics: ServerMetrics | undefined;

  constructor(
    private readonly handler: RequestHandler,
    /** This process among the server's, for the metrics' `process` label. */
    private readonly processName: string,
    private readonly sources: MetricSources,
  ) {}

  /** After the start and each reload: the current access log, and the admin block's `metrics`. */
  follow(access: AccessLog | undefined, admin: { readonly metrics?: boolean } | undefined): void {
    if (admin?.metrics === true) this.metrics ??= new ServerMetrics(this.processName, this.sources);
    const metrics = this.metrics;
    this.handler.onDone =
      access === undefined && metrics === undefined
        ? undefined
        : (record) => {
            access?.log(accessEntry(record));
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
