// `/status`'s fields as CONTRACT.md fixes them, whichever server reports them: one process, or a
// primary summing its workers. Each adds its own fields after these.
import { VERSION } from '../version.js';

export interface StatusCounts {
  readonly startedAt: Date;
  readonly connections: number;
  readonly requests: number;
  readonly reloads: number;
  readonly lastReload: Date | undefined;
  readonly listeners: readonly string[];
}

export function statusFields(c: StatusCounts): Record<string, unknown> {
  return {
    status: 'ok',
    version: VERSION,
    uptime_sec: Math.floor((Date.now() - c.startedAt.getTime()) / 1000),
    started_at: c.startedAt.toISOString(),
    connections_active: c.connections,
    requests_total: c.requests,
    reloads: c.reloads,
    last_reload: c.lastReload?.toISOString() ?? null,
    listeners: c.listeners,
  };
}
