// How many CGI processes run at once: a flood of requests must not fork the machine to death.
// Beyond the bound, requests wait their turn, a bounded number of them for a bounded time; the
// others get 503 at once.

/** CGI processes at once, per server (docs/running.md). */
export const MAX_PROCESSES = 64;
/** Requests that may wait for a process slot; more get 503 at once. */
export const MAX_WAITING = 1024;
/** How long a request waits for a slot before it gets 503. */
export const WAIT_MS = 30_000;

export class ProcessSlots {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit = MAX_PROCESSES) {}

  /** Resolves with a release function once a slot is free; false when none came in time. */
  acquire(): Promise<(() => void) | false> {
    if (this.running < this.limit) return Promise.resolve(this.take());
    if (this.waiting.length >= MAX_WAITING) return Promise.resolve(false);
    return new Promise((resolve) => {
      const turn = () => {
        clearTimeout(timer);
        resolve(this.take());
      };
      const timer = setTimeout(() => {
        const at = this.waiting.indexOf(turn);
        if (at >= 0) this.waiting.splice(at, 1);
        resolve(false);
      }, WAIT_MS);
      this.waiting.push(turn);
    });
  }

  private take(): () => void {
    this.running++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      this.waiting.shift()?.();
    };
  }

  /** A Plan's lease ends: nothing to close, the running scripts end with their requests. */
  close(): void {}
}
