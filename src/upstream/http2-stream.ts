// One request to a backend as an HTTP/2 stream of a pooled session (http2-pool.ts), driving the same
// handler undici drives (transport.ts): the client's body goes up as the stream takes it and its
// trailers after it; the response comes down as the client takes it, its trailers with its end,
// so a gRPC call streams both ways at once and its status arrives. Time limits as for HTTP/1.1:
// proxyResponseTimeout until the head, proxyIdleTimeout between body pieces (not while the
// client's backpressure holds the stream). A reset or a failure on either side resets the other.
import { addField } from '../http/http2-single-values.js';
import type { ClientHttp2Session, ClientHttp2Stream, OutgoingHttpHeaders } from 'node:http2';
import type { Readable } from 'node:stream';
import { fieldList, trailerObject } from '../http/http2-head.js';
import type { UpstreamHandler, UpstreamRequest, PoolPolicy } from './transport.js';

const FLAG_END_STREAM = 0x1;

/** An error with a code failures.ts and the relay know (undici's, where one names the case). */
export function codedError(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

/** A request body that may carry the client's trailer fields once it has ended (request-body.ts). */
interface TrailingBody extends Readable {
  readonly trailers?: readonly string[] | undefined;
}

export class UpstreamStream {
  private stream: ClientHttp2Stream | undefined;
  private body: TrailingBody | undefined;
  /** The handler has had its onComplete or onError. */
  private finished = false;
  private headed = false;
  private paused = false;
  private trailers: string[] | null = null;
  /** The client's trailers, taken when its body ends. */
  private requestTrailers: readonly string[] | undefined;
  private timer: NodeJS.Timeout | undefined;
  /**
   * Resets the stream with CANCEL. node:http2's close(code) ends the request first, and a backend
   * would take a cut upload for a whole one; only an abort resets without that end.
   */
  private readonly cancel = new AbortController();

  constructor(
    session: ClientHttp2Session,
    scheme: 'http' | 'https',
    private readonly policy: PoolPolicy,
    options: UpstreamRequest,
    private readonly handler: UpstreamHandler,
    private readonly closed: () => void,
  ) {
    const body = (options.body ?? undefined) as TrailingBody | undefined;
    let stream: ClientHttp2Stream;
    try {
      if (options.upgrade) throw new Error('a WebSocket cannot be proxied to an HTTP/2 backend');
      stream = session.request(requestHead(options, scheme), {
        endStream: body === undefined,
        // Sent after the body: the client's trailers, or an empty end.
        waitForTrailers: body !== undefined,
        signal: this.cancel.signal,
      });
    } catch (error) {
      this.finished = true;
      closed();
      handler.onError(error as Error);
      return;
    }
    this.stream = stream;
    stream
      .once('response', this.onResponse)
      .on('data', this.onData)
      .once('trailers', this.onTrailers)
      .once('end', this.onEnd)
      .once('close', this.onClose)
      .on('error', this.onError);
    this.timer = setTimeout(this.onHeadTimeout, policy.responseTimeoutMs).unref();
    handler.onConnect(this.abort);
    if (body === undefined || this.finished) return;
    this.body = body;
    body.on('data', this.onBodyData).once('end', this.onBodyEnd).once('error', this.onError);
    stream.on('drain', this.onDrain).once('wantTrailers', this.onWantTrailers);
  }

  /** The relay gives up (its client left): the backend's stream is cancelled. */
  private readonly abort = (reason?: Error): void =>
    this.fail(reason ?? new Error('the request was aborted'));

  private readonly onResponse = (
    headers: Readonly<Record<string, string | string[] | number | undefined>>,
    flags: number,
  ): void => {
    if (this.finished) return;
    this.headed = true;
    clearTimeout(this.timer);
    this.timer = setTimeout(this.onIdleTimeout, this.policy.idleTimeoutMs).unref();
    this.handler.trailersMayFollow = (flags & FLAG_END_STREAM) === 0;
    const status = Number(headers[':status']);
    if (!this.handler.onHeaders(status, fieldList(headers), this.resume, '')) this.pause();
  };

  private readonly onData = (chunk: Buffer): void => {
    if (this.finished) return;
    this.timer?.refresh();
    if (!this.handler.onData(chunk)) this.pause();
  };

  private pause(): void {
    this.paused = true;
    this.stream!.pause();
  }

  private readonly resume = (): void => {
    if (!this.paused || this.finished) return;
    this.paused = false;
    this.timer?.refresh();
    this.stream!.resume();
  };

  private readonly onTrailers = (
    headers: Readonly<Record<string, string | string[] | number | undefined>>,
  ): void => {
    this.trailers = fieldList(headers);
  };

  // After the last body piece was read (a paused stream has 'trailers' before its data is out).
  private readonly onEnd = (): void => {
    if (this.finished) return;
    if (!this.headed) {
      this.fail(new Error('the backend ended the stream without a response head'));
      return;
    }
    this.finished = true;
    clearTimeout(this.timer);
    this.detachBody();
    const stream = this.stream!;
    // The backend answered before the request's end (a gRPC error status): the rest is not sent.
    if (!stream.closed && !stream.writableEnded) this.cancel.abort();
    this.handler.onComplete(this.trailers);
  };

  private readonly onClose = (): void => {
    clearTimeout(this.timer);
    this.detachBody();
    this.closed();
    if (this.finished) return;
    const code = this.stream!.rstCode;
    this.fail(
      codedError(
        `the backend reset the stream (HTTP/2 error ${code ?? 'unknown'})${this.headed ? '' : ' before its response head'}`,
        'UND_ERR_SOCKET',
      ),
    );
  };

  private readonly onError = (error: Error): void => this.fail(error);

  private readonly onHeadTimeout = (): void =>
    this.fail(
      codedError(
        `no response head within ${this.policy.responseTimeoutMs} ms`,
        'UND_ERR_HEADERS_TIMEOUT',
      ),
    );

  // A stream held by the client's backpressure is not idle: the limit waits for it to resume.
  private readonly onIdleTimeout = (): void => {
    if (this.paused) return;
    this.fail(
      codedError(
        `no response body piece within ${this.policy.idleTimeoutMs} ms`,
        'UND_ERR_BODY_TIMEOUT',
      ),
    );
  };

  private fail(error: Error): void {
    if (this.finished) return;
    this.finished = true;
    clearTimeout(this.timer);
    this.detachBody();
    if (this.stream !== undefined && !this.stream.closed) this.cancel.abort();
    this.handler.onError(error);
  }

  private readonly onBodyData = (chunk: Buffer): void => {
    if (!this.stream!.write(chunk)) this.body!.pause();
  };

  private readonly onDrain = (): void => {
    this.body?.resume();
  };

  private readonly onBodyEnd = (): void => {
    this.requestTrailers = this.body!.trailers;
    this.stream!.end();
  };

  private readonly onWantTrailers = (): void => {
    const trailers = this.requestTrailers;
    try {
      this.stream!.sendTrailers(trailers === undefined ? {} : trailerObject(trailers));
    } catch (error) {
      this.fail(error as Error);
    }
  };

  private detachBody(): void {
    const body = this.body;
    if (body === undefined) return;
    this.body = undefined;
    body.off('data', this.onBodyData).off('end', this.onBodyEnd).off('error', this.onError);
    this.stream!.off('drain', this.onDrain);
  }
}

/** The request head: pseudo-fields, then the forwarded fields (`host` as `:authority`). */
function requestHead(options: UpstreamRequest, scheme: 'http' | 'https'): OutgoingHttpHeaders {
  const head: OutgoingHttpHeaders = {
    ':method': options.method,
    ':path': options.path,
    ':scheme': scheme,
  };
  const fields = options.headers as readonly string[];
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i]!.toLowerCase();
    const value = fields[i + 1]!;
    if (name === 'host') {
      head[':authority'] = value;
      continue;
    }
    // node:http2 takes `te` only as the single value `trailers`.
    if (name === 'te' && head.te !== undefined) continue;
    addField(head as Record<string, string | string[] | undefined>, name, value);
  }
  return head;
}
