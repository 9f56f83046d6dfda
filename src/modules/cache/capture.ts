// The body of a response on its way to the client, kept for the store up to a bound: past it the
// pieces are dropped at once and the response goes on streaming, never buffered whole
// (maximumCacheResponseSize).
import type { BodyTap } from '../../http/response-tap.js';

export interface CaptureOptions {
  /** The response goes to the capture alone; the client gets nothing of it. */
  readonly absorb: boolean;
  /** The most bytes kept; past it the body is dropped. */
  readonly limit: number;
  /** Gets the body once it is all there and within the limit. */
  readonly onEnd: (body: Buffer) => void;
  /** Called once if the body grows past the limit. */
  readonly onGiveUp?: () => void;
}

export class Capture implements BodyTap {
  readonly absorb: boolean;
  private readonly limit: number;
  private readonly onEnd: (body: Buffer) => void;
  private readonly onGiveUp: () => void;
  private chunks: Buffer[] = [];
  private size = 0;
  private overflowed = false;
  private ended = false;

  constructor(options: CaptureOptions) {
    this.absorb = options.absorb;
    this.limit = options.limit;
    this.onEnd = options.onEnd;
    this.onGiveUp = options.onGiveUp ?? (() => undefined);
  }

  data(chunk: Buffer): void {
    if (this.overflowed) return;
    this.size += chunk.length;
    if (this.size > this.limit) {
      this.overflowed = true;
      this.chunks = [];
      this.onGiveUp();
      return;
    }
    this.chunks.push(chunk);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.overflowed) return;
    const body = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    this.chunks = [];
    this.onEnd(body);
  }

  /** The whole body was seen (a response cut on its way never is). */
  get complete(): boolean {
    return this.ended;
  }
}

/** A response the cache takes for itself and keeps nothing of (a 304, an error it answers for). */
export function absorbAll(): Capture {
  return new Capture({ absorb: true, limit: 0, onEnd: () => undefined });
}
