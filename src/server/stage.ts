// A stage answers the request, or calls next() and may wrap what comes back. Chains are composed
// once per Resolved at compile time; a request only walks the array.
import type { Ctx } from './ctx.js';

export type Next = () => Promise<void>;
export type Stage = (ctx: Ctx, next: Next) => Promise<void> | void;

/** One stage out of several, run in order; the last `next` is `fallback`. */
export function compose(stages: readonly Stage[], fallback: Stage): Stage {
  if (stages.length === 0) return fallback;
  return (ctx, outerNext) => {
    const run = async (i: number): Promise<void> => {
      const stage = i < stages.length ? stages[i]! : fallback;
      await stage(ctx, i < stages.length ? () => run(i + 1) : outerNext);
    };
    return run(0);
  };
}
