// An HTTP/2 request and its response on node:http2's core stream API. The compatibility layer
// builds a Readable request and a Stream response per stream and re-wires a dozen stream events
// for them, the largest cost of a small file over HTTP/2 (bench/h2.sh). These two hold only what the
// pipeline reads; the stream itself carries the request body (Ctx.body) and the response
// (respond.ts writes to it).
import type { IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import type { Socket } from 'node:net';

export class Http2Request {
  readonly method: string;
  /** `:path`; absent for a CONNECT, whose target is `:authority`. */
  readonly url: string | undefined;
  /**
   * The session's socket (one proxy object per session, so it keys per-connection state), kept
   * from the start: node:http2 forgets a stream's session once it closes, and the access log's
   * line (its TLS version) is made then.
   */
  readonly socket: Socket;

  constructor(
    readonly stream: ServerHttp2Stream,
    /** The stream's fields, pseudo-fields included, as node:http2 hands them over. */
    readonly headers: IncomingHttpHeaders,
    readonly rawHeaders: string[],
  ) {
    this.method = headers[':method'] as string;
    this.url = headers[':path'] as string | undefined;
    this.socket = stream.session?.socket as Socket;
  }

  get httpVersion(): string {
    return '2.0';
  }

  get httpVersionMajor(): number {
    return 2;
  }

  get httpVersionMinor(): number {
    return 0;
  }
}

export class Http2Response {
  /** Trailer fields for a head sent to wait for them (respond.ts endResponse). */
  trailers: readonly string[] | undefined = undefined;

  constructor(readonly stream: ServerHttp2Stream) {}

  get headersSent(): boolean {
    return this.stream.headersSent;
  }

  /** 'close' (once only): the stream ended, finished or reset. */
  on(event: 'close', listener: () => void): this {
    this.stream.on(event, listener);
    return this;
  }

  once(event: 'close', listener: () => void): this {
    this.stream.once(event, listener);
    return this;
  }

  off(event: 'close', listener: () => void): this {
    this.stream.off(event, listener);
    return this;
  }

  /**
   * Resets the stream: a response cut short is never taken for a complete one. With an error
   * node:http2 sends RST_STREAM(INTERNAL_ERROR); without one it would send NO_ERROR, which a
   * client may read as a complete response.
   */
  destroy(error: Error = new Error('the response was cut short')): void {
    this.stream.destroy(error);
  }
}
