// A stage that must see what the stages after it answer (the cache, which stores a response as it
// passes and takes a revalidation's 304 for itself) sets `ctx.tap`; respond.ts shows it every head
// before the location's header rules (header-rules.ts) are applied, and the body as it is written.
import { Transform, Writable } from 'node:stream';

export interface ResponseTap {
  /**
   * The head as the stage made it, [name, value, …]; the tap may add fields to `headers`. Returns
   * what watches the body, or undefined to let the response pass unwatched.
   */
  head(status: number, headers: string[]): BodyTap | undefined;
}

export interface BodyTap {
  /** The response goes to the tap alone; the client gets nothing of it. */
  readonly absorb: boolean;
  data(chunk: Buffer): void;
  /** The whole body was seen; never called for a response that was cut. */
  end(): void;
}

/** Where a stage writes a body piece by piece (respond.ts startResponse). */
export interface BodyTarget {
  write(chunk: Buffer): boolean;
  end(): void;
  on(event: 'drain', listener: () => void): unknown;
  off(event: 'drain', listener: () => void): unknown;
}

/** Writes to the client (unless absorbed) and shows each piece to the tap. */
export class TappedTarget implements BodyTarget {
  constructor(
    private readonly target: BodyTarget | undefined,
    private readonly tap: BodyTap,
  ) {}

  write(chunk: Buffer): boolean {
    this.tap.data(chunk);
    return this.target === undefined ? true : this.target.write(chunk);
  }

  end(): void {
    this.tap.end();
    this.target?.end();
  }

  on(event: 'drain', listener: () => void): this {
    this.target?.on(event, listener);
    return this;
  }

  off(event: 'drain', listener: () => void): this {
    this.target?.off(event, listener);
    return this;
  }
}

/** Feeds a tap alone (an absorbed response). */
export function tapWritable(tap: BodyTap): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      tap.data(chunk);
      done();
    },
    final(done) {
      tap.end();
      done();
    },
  });
}

/** Shows each piece to a tap on its way to the client. */
export function tapTransform(tap: BodyTap): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      tap.data(chunk);
      done(null, chunk);
    },
    flush(done) {
      tap.end();
      done();
    },
  });
}
