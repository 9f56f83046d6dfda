// Requests waiting for a process of an application while every one of them is being replaced:
// each is handed the first that serves again, or nothing after a while or when the pool closes.

/** How long a request waits for a process while every one of them is being replaced. */
const WAIT_FOR_WORKER_MS = 10_000;

export class WaitingRequests<T> {
  private readonly waiters = new Set<(worker: T | undefined) => void>();

  /** The next process offered, or undefined after WAIT_FOR_WORKER_MS. */
  wait(): Promise<T | undefined> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(undefined), WAIT_FOR_WORKER_MS);
      const done = (worker: T | undefined) => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve(worker);
      };
      this.waiters.add(done);
    });
  }

  /** A process serves again: every request waiting takes it. */
  offer(worker: T | undefined): void {
    for (const waiter of [...this.waiters]) waiter(worker);
  }
}
