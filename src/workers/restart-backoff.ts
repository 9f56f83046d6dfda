// When a dead worker is started again, and what the error log says of it. A worker that lived
// less than STABLE_MS is part of a crash loop: each such death doubles the wait before the next
// start (MIN_MS up to MAX_MS); one that lived longer is replaced at once. Each cause of death is
// logged the first time, then at most once a minute with how often it came back.

const STABLE_MS = 10_000;
const MIN_MS = 100;
const MAX_MS = 30_000;
const REPEAT_LOG_MS = 60_000;
// Causes remembered at once (a cause holds an error's text): the oldest is forgotten first.
const MAX_CAUSES = 100;

export class RestartBackoff {
  private delayMs = 0;

  /** How long to wait before starting the next worker after one that lived `livedMs`. */
  next(livedMs: number): number {
    this.delayMs = livedMs >= STABLE_MS ? 0 : Math.min(MAX_MS, Math.max(MIN_MS, this.delayMs * 2));
    return this.delayMs;
  }
}

export class CauseLog {
  private readonly seen = new Map<string, { since: number; more: number }>();

  constructor(
    private readonly log: (line: string) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** `line` says what happened; `cause` is what makes two such lines the same. */
  report(cause: string, line: string): void {
    const now = this.now();
    const seen = this.seen.get(cause);
    if (seen === undefined) {
      if (this.seen.size >= MAX_CAUSES) this.seen.delete(this.seen.keys().next().value!);
      this.seen.set(cause, { since: now, more: 0 });
      return this.log(line);
    }
    seen.more++;
    if (now - seen.since < REPEAT_LOG_MS) return;
    this.log(`${line} (${seen.more} time${seen.more === 1 ? '' : 's'} since the last such line)`);
    seen.since = now;
    seen.more = 0;
  }
}
