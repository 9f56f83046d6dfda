// The Python application a request goes to, as the HTTP exchange and the WebSocket both need it.
import type { GatewayLimits } from '../gateway/timeouts.js';
import type { FrameChannel } from './frame-channel.js';

/** An application's processes as a request meets them: its own (pool.ts) or the primary's. */
export interface PythonProcesses {
  /** A channel to one, waiting a while when all are being replaced; undefined when none came. */
  worker(): Promise<FrameChannel | undefined>;
}

export interface PythonApplication {
  readonly pool: PythonProcesses;
  /** How messages name it: the mode and the application file (`wsgi /srv/app.py`). */
  readonly what: string;
  /** The proxy's time limits, which apply to it. */
  readonly limits: GatewayLimits;
}
