// Everything one request carries through the pipeline. Built once per request by the request
// handler; stages read `resolved` (the frozen settings) and may change `path`, `query`, `user` and
// the client address, which later stages and the access log then see.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { Resolved } from '../plan/resolved.js';
import type { Site } from '../plan/site.js';
import type { Deadlines } from './deadlines.js';
import { HttpError, type HeaderPairs } from './http-error.js';

export type Request = IncomingMessage | Http2ServerRequest;
export type Response = ServerResponse | Http2ServerResponse;

export class Ctx {
  /** Status and length of what was sent, for the access log. */
  status = 0;
  length: number | undefined = undefined;
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
  errorHeaders: HeaderPairs = [];
  /** The sanitized path (percent-encoded form) as it was before any rewrite. */
  originalPath = '/';
  /** The current path, percent-encoded form; rewrites change it. */
  path = '/';
  /** `?…` or empty. */
  query = '';
  resolved!: Resolved;
  site!: Site;
  /** When the `timeout` limit resets the connection (ms since the epoch), and who watches it. */
  deadline = 0;
  deadlines: Deadlines | undefined = undefined;

  constructor(
    readonly req: Request,
    readonly res: Response,
    readonly scheme: 'http' | 'https',
    /** ms since the epoch. */
    readonly startedAt: number,
    public clientAddress: string,
    public clientPort: number,
    readonly localAddress: string,
    readonly localPort: number,
    /**
     * The authority the request is for, lower-cased, port included: an absolute-form target's,
     * else the Host header (undefined when absent). Routing and redirects use it.
     */
    readonly hostHeader: string | undefined,
    /** The host name alone: no port, no trailing dot. */
    readonly hostname: string | undefined,
  ) {}

  get method(): string {
    return this.req.method ?? 'GET';
  }

  get responded(): boolean {
    return this.res.headersSent;
  }

  /** Ends the chain with an error status; the error responder renders it. */
  fail(status: number, headers: HeaderPairs = [], detail?: string): never {
    throw new HttpError(status, headers, detail);
  }
}
