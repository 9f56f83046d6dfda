// The client's request body as the backend reads it: pulled from the client only as the backend
// takes it (backpressure both ways), and untouched until then, so an attempt whose connection
// failed can hand the body, still whole, to the next backend. The client's trailer fields are kept
// with its end, for a backend that can take them (HTTP/2; undici's HTTP/1.1 sends none).
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import type { Request } from '../http/ctx.js';
import { fieldList } from '../http/http2-head.js';

const ignore = () => undefined;

export class RequestBody extends Readable {
  /** Some of the body has left the client's stream: it cannot be sent again. */
  consumed = false;
  /** The client's trailer fields, [name, value, …], once its body has ended with some. */
  trailers: readonly string[] | undefined = undefined;
  private readonly onData = (chunk: Buffer) => {
    this.consumed = true;
    if (!this.push(chunk)) this.source.pause();
  };
  // HTTP/1.1 has them on the message by its end; an HTTP/2 stream emits them before its end.
  private readonly onEnd = () => {
    const raw = (this.source as Partial<IncomingMessage>).rawTrailers;
    if (raw !== undefined && raw.length > 0) this.trailers = raw;
    this.push(null);
  };
  private readonly onTrailers = (fields: Record<string, string | string[] | undefined>) => {
    this.trailers = fieldList(fields);
  };
  private readonly onError = (error: Error) => this.destroy(error);

  constructor(private readonly source: Readable) {
    super();
    // The client's abort reaches the exchange by its response's 'close'; this error is for the
    // reader that holds the body, and until a connection takes it there is none to hear it.
    this.on('error', ignore);
    source.on('data', this.onData).on('end', this.onEnd).on('error', this.onError);
    source.once('trailers', this.onTrailers);
    source.pause();
  }

  override _read(): void {
    this.source.resume();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.source.off('data', this.onData).off('end', this.onEnd).off('error', this.onError);
    this.source.off('trailers', this.onTrailers);
    this.source.pause();
    callback(error);
  }
}

/** Whether the request carries a body (HTTP/1.1 framing, or an HTTP/2 stream left open). */
export function hasBody(req: Request): boolean {
  if ('stream' in req) return !req.stream.endAfterHeaders && !req.stream.readableEnded;
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * After the exchange: what the backend left unread of the client's body is read and dropped, as
 * Node does for a body nobody began to read. One that was begun stays paused otherwise, and a
 * client still sending it stalls until its connection is reset (a 20 MB upload to a CGI script
 * that answered without reading it: the client saw its connection reset).
 */
export function discardRest(body: Readable): void {
  if (body.readableEnded || body.destroyed) return;
  body.unpipe();
  body.resume();
}
