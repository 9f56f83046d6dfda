// What the admin API reports of a server with workers: every serving worker asked, the answers
// listed and summed. A worker that does not answer (starting, gone, stuck) counts as zero.
import {
  AggregatorRegistry,
  type MetricObjectWithValues,
  type MetricValue,
  type Registry,
} from 'prom-client';
import { statusFields, type StatusCounts } from '../server/status-fields.js';
import type { WorkerStats } from './messages.js';
import type { WorkerProcess } from './worker-process.js';

/** A worker's place as the reports see it. */
export interface Reported {
  readonly process: WorkerProcess;
  readonly restarts: number;
}

/** `/status` of a server with workers: the primary's own fields, the workers' counts summed. */
export async function primaryStatus(
  slots: readonly Reported[],
  own: Omit<StatusCounts, 'connections' | 'requests'>,
  certificates: unknown,
): Promise<Record<string, unknown>> {
  const counts = await workerCounts(slots);
  return {
    ...statusFields({ ...own, connections: counts.connections, requests: counts.requests }),
    ...counts.extra,
    ...(certificates ? { certificates } : {}),
    workers: counts.workers,
  };
}

/** Each worker's counts, their sums, and what the first that answered says of its modules. */
export async function workerCounts(slots: readonly Reported[]) {
  const stats = await Promise.all(
    slots.map((slot) => slot.process.ask<WorkerStats>({ type: 'stats' }).catch(() => null)),
  );
  const workers = slots.map((slot, i) => ({
    pid: slot.process.pid,
    uptime_sec: Math.floor((Date.now() - slot.process.startedAt) / 1000),
    requests_total: stats[i]?.requests_total ?? 0,
    connections_active: stats[i]?.connections_active ?? 0,
    restarts: slot.restarts,
  }));
  const sum = (key: 'requests_total' | 'connections_active') =>
    workers.reduce((total, w) => total + w[key], 0);
  return {
    workers,
    requests: sum('requests_total'),
    connections: sum('connections_active'),
    // The same in every worker: one configuration.
    extra: stats.find((s) => s !== null)?.extra ?? {},
  };
}

/** Each worker's /runtime, or why it has none. */
export function workerRuntimes(slots: readonly Reported[]): Promise<Record<string, unknown>[]> {
  return Promise.all(
    slots.map((slot) =>
      slot.process
        .ask<Record<string, unknown>>({ type: 'runtime' })
        .catch((e: Error) => ({ pid: slot.process.pid, error: e.message })),
    ),
  );
}

/** Every worker's metrics and `own`, summed where they are the same series. */
export async function summedMetrics(
  slots: readonly Reported[],
  own: Registry | undefined,
): Promise<string> {
  type Metrics = MetricObjectWithValues<MetricValue<string>>[];
  const workers = await Promise.all(
    slots.map((slot) => slot.process.ask<Metrics>({ type: 'metrics' }).catch(() => [])),
  );
  const mine = ((await own?.getMetricsAsJSON()) ?? []) as Metrics;
  return AggregatorRegistry.aggregate([...workers, mine]).metrics();
}
