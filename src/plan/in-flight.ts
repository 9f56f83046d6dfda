// The requests a Plan is serving, so a reload can return its leases once the last one ends
// (ARCHITECTURE.md: requests in flight keep the Plan they started with). Counted only for Plans
// that hold module resources: a static site pays nothing per request for it.
export class InFlight {
  private count = 0;
  private onIdle: (() => void) | undefined;

  constructor(readonly tracked: boolean) {}

  start(): void {
    this.count++;
  }

  end(): void {
    if (--this.count > 0 || this.onIdle === undefined) return;
    const idle = this.onIdle;
    this.onIdle = undefined;
    idle();
  }

  /** Resolves when no request is in flight (asked once, when the Plan is retired). */
  idle(): Promise<void> {
    if (this.count === 0) return Promise.resolve();
    return new Promise((resolve) => (this.onIdle = resolve));
  }
}
