// A stage answers the request, or calls next(ctx) and may wrap what comes back. Chains are composed
// once per Resolved at compile time; a request only walks them.
import type { Ctx } from './ctx.js';

declare module './resolved.js' {
  interface Resolved {
    /** The prepared handler chain: built-in stages, modules, method check, static files. */
    readonly chain: Handler;
  }
}

/** A whole chain: its stages, then what answers when none did. */
export type Handler = (ctx: Ctx) => Outcome;
/**
 * The stages after this one (the rest of the chain), run for the Ctx given: the request's own, or a
 * copy (the cache revalidates in the background with a copy of the request whose response goes
 * nowhere).
 */
export type Next = Handler;
export type Stage = (ctx: Ctx, next: Next) => Outcome;

/** Nothing when the stage answered synchronously, else what to wait for (it may reject). */
export type Outcome = PromiseLike<void> | void;

/**
 * A synchronous refusal (the file cache knows the path is missing), settled as a rejected promise
 * for whatever awaits or `then`s it. A real rejected promise costs Node's unhandled-rejection
 * bookkeeping and a microtask, and a throw under a native callback costs more (V8 builds a message):
 * the request handler takes this one's error at once. Static 404, bench/static.sh profile.
 */
export class Refusal implements PromiseLike<never> {
  constructor(readonly error: unknown) {}

  then<T1 = never, T2 = never>(
    _onFulfilled?: ((value: never) => T1 | PromiseLike<T1>) | null,
    onRejected?: ((reason: unknown) => T2 | PromiseLike<T2>) | null,
  ): PromiseLike<T1 | T2> {
    const rejected = Promise.reject(this.error);
    return onRejected ? rejected.then(undefined, onRejected) : rejected;
  }
}

/**
 * Stages run in order, then `fallback`. Each stage's `next` is made here, once per chain, so a
 * request walks the chain without a function made per stage; stages that answer synchronously (a
 * cached file) cost no promise: each returns what the stage after it returned.
 */
export function compose(stages: readonly Stage[], fallback: Handler): Handler {
  let next: Handler = fallback;
  for (let i = stages.length - 1; i >= 0; i--) {
    const stage = stages[i]!;
    const after = next;
    next = (ctx) => stage(ctx, after);
  }
  return next;
}
