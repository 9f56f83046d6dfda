// A copy of a request whose response goes nowhere: what a background validation sends through the
// stages after the cache (RFC 5861 §3) once the client has had its stale response.
import { type IncomingMessage, ServerResponse } from 'node:http';
import type { Ctx } from '../../http/ctx.js';
import { hasBody } from '../../upstream/request-body.js';

/** Undefined when the request had a body: it is gone, and a copy could not send it again. */
export function detachedCopy(ctx: Ctx): Ctx | undefined {
  if (hasBody(ctx.req)) return undefined;
  // Never written to: the cache's tap absorbs every response of the copy.
  const res = new ServerResponse({
    method: ctx.method,
    httpVersionMajor: 1,
    httpVersionMinor: 1,
    headers: {},
  } as IncomingMessage);
  return ctx.detached(res);
}

/** Gives up on a copy: its response closes, which every stage takes for a client gone. */
export function abandonCopy(copy: Ctx): void {
  const res = copy.res as ServerResponse;
  res.destroy();
  res.emit('close');
}
