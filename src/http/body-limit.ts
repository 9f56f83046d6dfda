// `maximumRequestBodySize` (nginx's client_max_body_size): a body declared larger is refused
// before any of it is read; one of unknown length (chunked, or HTTP/2 without Content-Length) is
// counted as it is read, and fails with the same 413 the moment it passes the bound.
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { HttpError } from './http-error.js';

export function bodyTooLarge(limit: number): HttpError {
  return new HttpError(413, 'body-too-large', {
    detail: `the request body is larger than maximumRequestBodySize (${limit} bytes)`,
  });
}

/** Whether the request's Content-Length already says more than `limit`. */
export function declaredTooLarge(contentLength: string | undefined, limit: number): boolean {
  return contentLength !== undefined && Number(contentLength) > limit;
}

/** The client's body as its readers see it, failing with a 413 past `limit` bytes. */
export class LimitedBody extends Transform {
  private seen = 0;

  constructor(private readonly limit: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.seen += chunk.length;
    if (this.seen > this.limit) callback(bodyTooLarge(this.limit));
    else callback(null, chunk);
  }
}

/**
 * `source` read through a LimitedBody. The connection of a refused body is not kept: the rest of
 * the body is never read, so the next request's head could not be found after it.
 */
export function limitBody(source: Readable, limit: number, onRefused: () => void): Readable {
  const limited = new LimitedBody(limit);
  limited.on('error', onRefused);
  source.once('error', (e) => limited.destroy(e));
  return source.pipe(limited);
}
