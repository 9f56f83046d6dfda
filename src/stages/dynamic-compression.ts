// Where dynamic compression sits in a chain: around the modules that answer from an origin (the
// proxy, the gateways, Python), behind the cache, so a stored response is the coded one and a hit
// is never coded again; static files after them code themselves. A request whose response is not
// coded whatever it is (HEAD, a range, a switch of protocols) gets no coder at all.
import type { Ctx } from '../http/ctx.js';
import { DynamicCompression } from '../http/dynamic-compression.js';
import { ENCODINGS, negotiateEncoding } from '../http/encoding-negotiation.js';
import { replacedFields } from '../http/outgoing-fields.js';
import { Refusal, type Outcome, type Stage } from '../http/stage.js';

// What the origin is asked for behind the cache: the coding Portico chose, or nothing (identity).
const ASKED = new Map<string | undefined, ReadonlyMap<string, string | undefined>>([
  [undefined, new Map([['accept-encoding', undefined]])],
  ...ENCODINGS.map((e) => [e, new Map([['accept-encoding', e]])] as const),
]);

/**
 * `behindCache`: the cache keys a coded variant by the coding chosen (its variants.ts), not by the
 * client's Accept-Encoding; the origin is then asked with that coding alone, so that what it answers
 * depends on nothing the key leaves out (a backend coding by itself would otherwise store one
 * client's coding under another's key). Varnish does the same.
 */
export function dynamicCompression(behindCache: boolean): Stage {
  const coder = new DynamicCompression(behindCache);
  return (ctx, next) => {
    if (
      ctx.method === 'HEAD' ||
      ctx.method === 'CONNECT' ||
      ctx.upgrade !== undefined ||
      ctx.req.headers.range !== undefined
    )
      return next(ctx);
    if (behindCache) askForChosen(ctx);
    ctx.coder = coder;
    let outcome: Outcome;
    try {
      outcome = next(ctx);
    } catch (error) {
      ctx.coder = undefined;
      throw error;
    }
    // Answered at once, or refused at once (a file the cache knows is missing): no promise made.
    if (outcome === undefined || outcome instanceof Refusal) {
      ctx.coder = undefined;
      return outcome;
    }
    // An error page, or what the cache serves after its origin answered, is not coded here.
    return outcome.then(
      () => void (ctx.coder = undefined),
      (error: unknown) => {
        ctx.coder = undefined;
        throw error;
      },
    );
  };
}

/** After the origin modules: static files are coded by themselves, never twice. */
export const endOfDynamicCompression: Stage = (ctx, next) => {
  ctx.coder = undefined;
  return next(ctx);
};

function askForChosen(ctx: Ctx): void {
  const chosen = negotiateEncoding(ctx.req.headers['accept-encoding']);
  if (ctx.outgoing.headers['accept-encoding'] !== chosen)
    ctx.outgoing = replacedFields(ctx.outgoing, ASKED.get(chosen)!);
}
