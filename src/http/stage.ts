// A stage answers the request, or calls next() and may wrap what comes back. Chains are composed
// once per Resolved at compile time; a request only walks the array.
import type { Ctx } from './ctx.js';

/**
 * The stages after this one. Given a Ctx, they run for it instead: the cache revalidates in the
 * background with a copy of the request whose response goes nowhere.
 */
export type Next = (ctx?: Ctx) => Outcome;
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
 * One stage out of several, run in order; the last `next` is `fallback`. Stages that answer
 * synchronously (a cached file) cost no promise: `run` only returns what the stage returns.
 */
export function compose(stages: readonly Stage[], fallback: Stage): Stage {
  if (stages.length === 0) return fallback;
  const count = stages.length;
  const run = (ctx: Ctx, i: number, outerNext: Next): Outcome =>
    i < count
      ? stages[i]!(ctx, (other = ctx) => run(other, i + 1, outerNext))
      : fallback(ctx, outerNext);
  return (ctx, outerNext) => run(ctx, 0, outerNext);
}
