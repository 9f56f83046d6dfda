// A stage answers the request, or calls next() and may wrap what comes back. Chains are composed
// once per Resolved at compile time; a request only walks the array.
import type { Ctx } from './ctx.js';

export type Next = () => Promise<void> | void;
export type Stage = (ctx: Ctx, next: Next) => Promise<void> | void;

/**
 * One stage out of several, run in order; the last `next` is `fallback`. Stages that answer
 * synchronously (a cached file) cost no promise: `run` only returns what the stage returns.
 */
export function compose(stages: readonly Stage[], fallback: Stage): Stage {
  if (stages.length === 0) return fallback;
  const count = stages.length;
  return (ctx, outerNext) => {
    const run = (i: number): Promise<void> | void =>
      i < count ? stages[i]!(ctx, () => run(i + 1)) : fallback(ctx, outerNext);
    return run(0);
  };
}
