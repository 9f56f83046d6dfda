// A stage answers the request, or calls next() and may wrap what comes back. Chains are composed
// once per Resolved at compile time; a request only walks the array.
import type { Ctx } from './ctx.js';

/**
 * The stages after this one. Given a Ctx, they run for it instead: the cache revalidates in the
 * background with a copy of the request whose response goes nowhere.
 */
export type Next = (ctx?: Ctx) => Promise<void> | void;
export type Stage = (ctx: Ctx, next: Next) => Promise<void> | void;

/**
 * One stage out of several, run in order; the last `next` is `fallback`. Stages that answer
 * synchronously (a cached file) cost no promise: `run` only returns what the stage returns.
 */
export function compose(stages: readonly Stage[], fallback: Stage): Stage {
  if (stages.length === 0) return fallback;
  const count = stages.length;
  const run = (ctx: Ctx, i: number, outerNext: Next): Promise<void> | void =>
    i < count
      ? stages[i]!(ctx, (other = ctx) => run(other, i + 1, outerNext))
      : fallback(ctx, outerNext);
  return (ctx, outerNext) => run(ctx, 0, outerNext);
}
