// Request collapsing (the "no stampede"): while one request fetches a response the cache
// does not have, others for the same key wait for it instead of going to the origin too; they
// learn as soon as it is clear whether the response will be stored, and find it once it is.

export type FillOutcome = 'stored' | 'not-stored';

export interface Fill {
  readonly done: Promise<FillOutcome>;
  /** The first call decides; a promise settles the fill when the store has answered. */
  settle(outcome: FillOutcome | Promise<FillOutcome>): void;
}

export class Fills {
  private readonly pending = new Map<string, Fill>();

  /** The fill under way for `key`, if any. */
  current(key: string): Fill | undefined {
    return this.pending.get(key);
  }

  /** Starts the fill for `key`; it is forgotten once settled. */
  start(key: string): Fill {
    let settle!: (outcome: FillOutcome | Promise<FillOutcome>) => void;
    const done = new Promise<FillOutcome>((resolve) => (settle = resolve));
    let settled = false;
    const fill: Fill = {
      done,
      settle: (outcome) => {
        if (settled) return;
        settled = true;
        if (this.pending.get(key) === fill) this.pending.delete(key);
        settle(outcome);
      },
    };
    this.pending.set(key, fill);
    return fill;
  }
}
