// After the modules: what reaches this stage is for static files, which take GET and HEAD.
// OPTIONS is answered with those; anything else, POST included, is 405 with them in Allow, as
// nginx answers (Ferron 1.x served the file to a POST). Modules before this stage (proxy,
// gateways) accept any method; an errorConfig's chain has no method check (plan/chain.ts).
import { send } from '../http/respond.js';
import type { Stage } from '../http/stage.js';

/** What static files take. */
export const FILE_METHODS = 'GET, HEAD, OPTIONS';
/** What `OPTIONS *` says of the server as a whole: a location with a module may take POST. */
export const SERVER_METHODS = 'GET, POST, HEAD, OPTIONS';

export const methodCheck: Stage = (ctx, next) => {
  const method = ctx.method;
  if (method === 'GET' || method === 'HEAD') return next(ctx);
  if (method === 'OPTIONS') return send(ctx, 204, ['Allow', FILE_METHODS]);
  ctx.fail(405, 'method-not-allowed', [['Allow', FILE_METHODS]]);
};
