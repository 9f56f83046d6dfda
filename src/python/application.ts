// The Python application a request goes to, as the HTTP exchange and the WebSocket both need it.
import type { GatewayLimits } from '../gateway/timeouts.js';
import type { PythonPool } from './pool.js';

export interface PythonApplication {
  readonly pool: PythonPool;
  /** How messages name it: the mode and the application file (`wsgi /srv/app.py`). */
  readonly what: string;
  /** The proxy's time limits, which apply to it. */
  readonly limits: GatewayLimits;
}
