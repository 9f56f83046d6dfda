// Everything one request carries through the pipeline. Built once per request by the request
// handler; stages read `resolved` (the frozen settings) and may change `path`, `query`, `user` and
// the client address, which later stages and the access log then see.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex, Readable } from 'node:stream';
import { limitBody } from './body-limit.js';
import { HttpError, type FailureCode, type HeaderPairs } from './http-error.js';
import type { Http2Request, Http2Response } from './http2-exchange.js';
import type { OutgoingFields } from './outgoing-fields.js';
import type { Resolved } from './resolved.js';
import type { ResponseCoder } from './response-coder.js';
import type { ResponseTap } from './response-tap.js';

export type Request = IncomingMessage | Http2Request;
export type Response = ServerResponse | Http2Response;

/** The two ends of a connection, normalised (host-table.ts); one object per connection. */
export interface Addresses {
  readonly remote: string;
  readonly remotePort: number;
  readonly local: string;
  readonly localPort: number;
}

// Most requests carry no error headers: one shared empty list rather than one per request.
const NO_HEADERS: HeaderPairs = [];

/** Who resets a request whose response head is late (the `timeout` limit; deadlines.ts). */
export interface DeadlineWatch {
  /** The head is out: the limit no longer applies. */
  end(): void;
}

export interface CtxInit {
  readonly req: Request;
  readonly res: Response;
  readonly scheme: 'http' | 'https';
  /** ms since the epoch; now when absent. */
  readonly startedAt?: number;
  readonly addresses: Addresses;
  /**
   * The authority the request is for, lower-cased, port included: an absolute-form target's,
   * else the Host header (undefined when absent). Routing and redirects use it.
   */
  readonly hostHeader?: string | undefined;
  /** The host name alone: no port, no trailing dot. */
  readonly hostname?: string | undefined;
  /** The connection, when an HTTP/1.1 request asked to switch protocols (Upgrade). */
  readonly upgrade?: Duplex | undefined;
}

export class Ctx {
  readonly req: Request;
  readonly res: Response;
  readonly scheme: 'http' | 'https';
  /** ms since the epoch. */
  readonly startedAt: number;
  /** The client: the peer, or what a trusted X-Forwarded-For names. */
  clientAddress: string;
  clientPort: number;
  readonly localAddress: string;
  readonly localPort: number;
  readonly hostHeader: string | undefined;
  readonly hostname: string | undefined;
  /**
   * The connection, when an HTTP/1.1 request asked to switch protocols: a module that agrees
   * answers 101 (respond.ts switchProtocols) and takes it over; anything else answers as usual
   * and the connection closes after.
   */
  readonly upgrade: Duplex | undefined;
  /** Status and length of what was sent, for the access log. */
  status = 0;
  length: number | undefined = undefined;
  /** What failed, when the response is an error (HttpError's code). */
  failure: FailureCode | undefined = undefined;
  /** For the access log: ms from the request sent to a backend to the head of its response. */
  upstreamMs: number | undefined = undefined;
  /** For the access log: what the cache did (`HIT`, `MISS`…), when the response passed it. */
  cacheStatus: string | undefined = undefined;
  /** The basic-auth user, once authenticated. */
  user: string | undefined = undefined;
  /**
   * The request has a sanitized path and its Resolved, so an error may be re-dispatched through an
   * errorConfig. Refusals before that (Host, request target, URL sanitizer, `*`) get the default
   * error response, as in Ferron (REFERENCE-behaviour.md §1.1).
   */
  routed = false;
  /** Set while an errorConfig renders the page for this error: the page keeps this status. */
  errorStatus: number | undefined = undefined;
  /** Headers the error must carry (WWW-Authenticate, Allow…), kept on an errorConfig's page. */
  errorHeaders: HeaderPairs = NO_HEADERS;
  /** The sanitized path (percent-encoded form) as it was before any rewrite. */
  originalPath = '/';
  /** The current path, percent-encoded form; rewrites change it. */
  path = '/';
  /** `?…` or empty. */
  query = '';
  resolved!: Resolved;
  /** What resets the request if its response head is late; set while it is watched. */
  deadline: DeadlineWatch | undefined = undefined;
  /** A stage watching what the stages after it answer (the cache; response-tap.ts). */
  tap: ResponseTap | undefined = undefined;
  /** A stage coding what the stages after it answer (dynamic compression; response-coder.ts). */
  coder: ResponseCoder | undefined = undefined;
  /** What a stage put in place of the client's fields for the stages after it (`outgoing`). */
  private replacedFields: OutgoingFields | undefined = undefined;
  /** `maximumRequestBodySize` for a body of unknown length, counted as it is read (`body`). */
  bodyLimit: number | undefined = undefined;
  private limitedBody: Readable | undefined = undefined;

  constructor(init: CtxInit) {
    this.req = init.req;
    this.res = init.res;
    this.scheme = init.scheme;
    this.startedAt = init.startedAt ?? Date.now();
    this.clientAddress = init.addresses.remote;
    this.clientPort = init.addresses.remotePort;
    this.localAddress = init.addresses.local;
    this.localPort = init.addresses.localPort;
    this.hostHeader = init.hostHeader;
    this.hostname = init.hostname;
    this.upgrade = init.upgrade;
  }

  get method(): string {
    return this.req.method ?? 'GET';
  }

  /** What the client sends after its head: the request body, or a switched protocol's bytes. */
  get body(): Readable {
    const source = 'stream' in this.req ? this.req.stream : this.req;
    if (this.bodyLimit === undefined) return source;
    return (this.limitedBody ??= limitBody(source, this.bodyLimit, () => {
      if ('shouldKeepAlive' in this.res) this.res.shouldKeepAlive = false;
    }));
  }

  /**
   * The request fields as a backend must see them (outgoing-fields.ts): the client's own, or what
   * a stage set for the stages after it (the cache's revalidation, with its validators).
   */
  get outgoing(): OutgoingFields {
    return this.replacedFields ?? this.req;
  }

  set outgoing(fields: OutgoingFields) {
    this.replacedFields = fields === this.req ? undefined : fields;
  }

  get responded(): boolean {
    return this.res.headersSent;
  }

  /** The client has gone (or its time limit reset it): nothing sent now reaches anyone. */
  get clientGone(): boolean {
    return ('stream' in this.res ? this.res.stream : this.res).destroyed;
  }

  /**
   * A copy of this request answering into `res`, for a request sent again in the background (the
   * cache's revalidation): where it is for, who asks, its path and settings, and the fields a
   * backend sees. Not its response's state, its deadline, its tap or its connection upgrade.
   */
  detached(res: Response): Ctx {
    const copy = new Ctx({
      req: this.req,
      res,
      scheme: this.scheme,
      addresses: {
        remote: this.clientAddress,
        remotePort: this.clientPort,
        local: this.localAddress,
        localPort: this.localPort,
      },
      hostHeader: this.hostHeader,
      hostname: this.hostname,
    });
    copy.routed = this.routed;
    copy.resolved = this.resolved;
    copy.user = this.user;
    copy.originalPath = this.originalPath;
    copy.path = this.path;
    copy.query = this.query;
    copy.replacedFields = this.replacedFields;
    // A revalidation in the background stores what it gets: coded as the client's response was.
    copy.coder = this.coder;
    return copy;
  }

  /** Ends the chain with an error status; the error responder renders it. */
  fail(status: number, code: FailureCode, headers: HeaderPairs = []): never {
    throw new HttpError(status, code, { headers });
  }
}
