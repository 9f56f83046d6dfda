// What outlives one Plan: connection pools, the file cache, the authentication state, the OCSP
// stapler. A Plan holds a lease on each resource it uses; a reload's new Plan takes its leases
// before the old one returns its own, so whatever both use stays open, and a resource closes when
// its last lease is returned (ARCHITECTURE.md, "Modules": release). Stop returns every lease.

/** Anything a Plan can hold: closed once no Plan holds it. */
export interface Resource {
  close(): void | Promise<void>;
}

interface Held {
  readonly resource: Resource;
  leases: number;
}

/** Every resource of one server, by key. */
export class Resources {
  private readonly held = new Map<string, Held>();
  private plans = 0;

  /** A new, empty set of leases for a Plan being compiled. */
  leases(): Leases {
    return new Leases(this, ++this.plans);
  }

  /** @internal Leases.take: one more lease on `key`, made by `make` if nothing holds it. */
  acquire(key: string, make: () => Resource): Resource {
    let held = this.held.get(key);
    if (held === undefined) {
      held = { resource: make(), leases: 0 };
      this.held.set(key, held);
    }
    held.leases++;
    return held.resource;
  }

  /** What is held under keys that start with `prefix` (every log file, for a rotation). */
  heldUnder(prefix: string): Resource[] {
    const found: Resource[] = [];
    for (const [key, held] of this.held) if (key.startsWith(prefix)) found.push(held.resource);
    return found;
  }

  /** @internal Leases.release: one lease fewer; the last one closes the resource. */
  async return(key: string): Promise<void> {
    const held = this.held.get(key);
    if (held === undefined || --held.leases > 0) return;
    this.held.delete(key);
    await held.resource.close();
  }
}

/** What one Plan holds. Keys name a resource across modules (`upstream:http://a:80`), so rproxy and fauth share a pool. */
export class Leases {
  private readonly taken = new Map<string, Resource>();
  private released: Promise<void> | undefined;

  constructor(
    private readonly resources: Resources,
    /** Which Plan of the server holds these: each one compiled has its own number. */
    private readonly plan: number,
  ) {}

  /** The resource under `key`: the one this Plan or another already holds, else `make()`'s. */
  take<T extends Resource>(key: string, make: () => T): T {
    if (this.released) throw new Error(`a released Plan cannot take "${key}"`);
    let resource = this.taken.get(key);
    if (resource === undefined) {
      resource = this.resources.acquire(key, make);
      this.taken.set(key, resource);
    }
    return resource as T;
  }

  /**
   * The resource under `key` for this Plan alone: a reload's Plan makes its own under the same
   * key (a Python application's processes, so that the new ones run the current code).
   */
  takeOwn<T extends Resource>(key: string, make: () => T): T {
    return this.take(`plan ${this.plan}: ${key}`, make);
  }

  /** Returns every lease, once; resources no other Plan holds are closed. */
  release(): Promise<void> {
    this.released ??= Promise.all(
      [...this.taken.keys()].map((key) => this.resources.return(key)),
    ).then(() => undefined);
    return this.released;
  }
}
