// What carries one request to a backend: undici's Pool for HTTP/1.1, the HTTP/2 session pool
// (http2-pool.ts) for h2c and for HTTPS backends that choose HTTP/2 by ALPN. Both take undici's
// legacy handler form (exchange.ts says why that form), so one relay serves every transport.
import type { Duplex } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { GateLimits } from './gate.js';

/** Header or trailer fields as [name, value, …]: Buffers off undici's HTTP/1.1 parser, strings off HTTP/2. */
export type RawFields = readonly (Buffer | string)[];

export interface UpstreamHandler {
  /** The request is on a connection: from here the backend may see it. */
  onConnect(abort: (reason?: Error) => void): void;
  onHeaders(status: number, raw: RawFields, resume: () => void, statusText: string): boolean;
  onData(chunk: Buffer): boolean;
  /** `trailers`: the fields after the body (an empty list or null when none came). */
  onComplete(trailers: RawFields | null): void;
  onError(error: Error): void;
  onUpgrade(status: number, raw: RawFields | null, socket: Duplex): void;
  /**
   * Set by a transport before `onHeaders` when the response may end with trailer fields though
   * its head announces none (any HTTP/2 response may).
   */
  trailersMayFollow: boolean;
}

/** The request options undici's dispatch takes; the HTTP/2 pool reads the same. */
export type UpstreamRequest = Dispatcher.DispatchOptions;

export interface UpstreamDispatcher {
  dispatch(options: UpstreamRequest, handler: UpstreamHandler): boolean;
  close(): Promise<void>;
}

/** How a backend's connections are made and timed, whatever carries them. */
export interface PoolPolicy {
  /** Backend certificates are checked against Node's trust store (plus NODE_EXTRA_CA_CERTS). */
  readonly verify: boolean;
  /** HTTPS backends are offered HTTP/2 by ALPN (`proxyHTTP2`). */
  readonly http2: boolean;
  readonly connectTimeoutMs: number;
  /** From the request sent to the response head. */
  readonly responseTimeoutMs: number;
  /** Between two pieces of a response body. */
  readonly idleTimeoutMs: number;
  readonly gate: GateLimits;
}
