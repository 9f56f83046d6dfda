// `/runtime`: the process as an operator wants to see it. Event-loop delay is sampled by a
// histogram that runs only while an admin listener exists; utilisation and the delay percentile
// cover the time since the previous `/runtime` answer (or since the listener started).
import {
  monitorEventLoopDelay,
  performance,
  type EventLoopUtilization,
  type IntervalHistogram,
} from 'node:perf_hooks';

// The histogram's timer fires every RESOLUTION_MS and records the whole interval, so an idle loop
// reads as RESOLUTION_MS of delay: that much is taken off.
const RESOLUTION_MS = 20;

export class RuntimeStats {
  private readonly delay: IntervalHistogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  private lastUtilization: EventLoopUtilization = performance.eventLoopUtilization();

  constructor() {
    this.delay.enable();
  }

  read(): Record<string, unknown> {
    const memory = process.memoryUsage();
    const cpu = process.cpuUsage();
    const utilization = performance.eventLoopUtilization(this.lastUtilization);
    this.lastUtilization = performance.eventLoopUtilization();
    const p99 =
      this.delay.count > 0 ? Math.max(0, this.delay.percentile(99) / 1e6 - RESOLUTION_MS) : 0;
    this.delay.reset();
    return {
      node: process.version,
      pid: process.pid,
      platform: process.platform,
      arch: process.arch,
      memory: {
        rss: memory.rss,
        heap_used: memory.heapUsed,
        heap_total: memory.heapTotal,
        external: memory.external,
      },
      cpu: { user_ms: Math.round(cpu.user / 1000), system_ms: Math.round(cpu.system / 1000) },
      event_loop: {
        utilization: Math.round(utilization.utilization * 1e4) / 1e4,
        delay_p99_ms: Math.round(p99 * 100) / 100,
      },
      uptime_sec: Math.floor(process.uptime()),
    };
  }

  close(): void {
    this.delay.disable();
  }
}
