// The stage of the wsgi, wsgid and asgi modules: a request under the mount prefix goes to one of
// the application's bridge processes; an ASGI application also takes WebSocket requests.
import type { Logger } from '../http/logger.js';
import { decodePath } from '../http/paths.js';
import type { Stage } from '../http/stage.js';
import type { PythonApplication, PythonProcesses } from './application.js';
import type { PythonMode } from './worker.js';
import { hasBody } from '../upstream/request-body.js';
import { exchangeWithPython } from './exchange.js';
import { asgiScope, mounted, mountPrefix, wsgiEnviron } from './heads.js';
import { isWebSocketRequest, serveWebSocket } from './websocket.js';
import type { GatewayLimits } from '../gateway/timeouts.js';

export interface PythonStageSetup {
  readonly mode: PythonMode;
  readonly pool: PythonProcesses;
  /** `wsgiPath`, `wsgidPath` or `asgiPath`. */
  readonly path: string;
  readonly application: string;
  readonly limits: GatewayLimits;
  readonly errorLog: Logger;
}

export function pythonStage(setup: PythonStageSetup): Stage {
  const prefix = mountPrefix(setup.path);
  const application: PythonApplication = {
    pool: setup.pool,
    what: `${setup.mode} ${setup.application}`,
    limits: setup.limits,
  };
  return async (ctx, next) => {
    const mount = mounted(prefix, decodePath(ctx.path));
    if (mount === undefined) return next(ctx);
    if (setup.mode === 'asgi' && isWebSocketRequest(ctx))
      return serveWebSocket(ctx, application, mount);
    const body = hasBody(ctx.req);
    const head =
      setup.mode === 'asgi'
        ? asgiScope(ctx, mount, { hasBody: body })
        : wsgiEnviron(ctx, mount, { application: setup.application, hasBody: body });
    return exchangeWithPython(ctx, application, { head, hasBody: body });
  };
}
