// The body of a response on its way to the client, kept for the store up to a bound: past it the
// pieces are dropped at once and the response goes on streaming, never buffered whole
// (maximumCacheResponseSize).
import type { BodyTap } from '../../http/response-tap.js';

export class Capture implements BodyTap {
  private chunks: Buffer[] = [];
  private size = 0;
  private overflowed = false;
  private ended = false;

  /**
   * `limit` in bytes; `onEnd` gets the body once it is all there and within the limit, `onGiveUp`
   * is called once if it grows past the limit.
   */
  constructor(
    readonly absorb: boolean,
    private readonly limit: number,
    private readonly onEnd: (body: Buffer) => void,
    private readonly onGiveUp: () => void = () => undefined,
  ) {}

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
