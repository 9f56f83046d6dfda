// After the modules: OPTIONS is answered with the methods static files support, GET, HEAD and POST
// go on, anything else is 405. Modules before this stage (proxy, gateways) accept any method; an
// errorConfig's chain has no method check (plan/chain.ts).
import { send } from '../http/respond.js';
import type { Stage } from '../http/stage.js';

export const ALLOWED_METHODS = 'GET, POST, HEAD, OPTIONS';

export const methodCheck: Stage = (ctx, next) => {
  const method = ctx.method;
  if (method === 'GET' || method === 'HEAD' || method === 'POST') return next(ctx);
  if (method === 'OPTIONS') return send(ctx, 204, ['Allow', ALLOWED_METHODS]);
  ctx.fail(405, 'method-not-allowed', [['Allow', ALLOWED_METHODS]]);
};
