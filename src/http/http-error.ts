// Errors are values: a stage throws HttpError and the one error responder renders the page.
// `code` says what failed in a stable word, so the error log, the access record, metrics and
// passive health tell failures apart without parsing messages; `headers` are the extras the page
// must carry (Allow, WWW-Authenticate, Content-Range…); `detail` is for the error log only.
import { STATUS_CODES } from 'node:http';

export type HeaderPairs = readonly (readonly [string, string])[];

/** What failed. Stable: logs and metrics are read by tools that match on these words. */
export type FailureCode =
  // the request itself
  | 'bad-host'
  | 'bad-target'
  | 'bad-path'
  | 'bad-forwarded-for'
  | 'bad-credentials'
  | 'blocked'
  | 'denied'
  | 'rate-limited'
  | 'unauthorized'
  | 'too-many-attempts'
  | 'method-not-allowed'
  | 'configured-status'
  | 'not-found'
  | 'forbidden'
  | 'precondition-failed'
  | 'range-not-satisfiable'
  | 'not-cached'
  | 'body-too-large'
  | 'too-many-fields'
  // what the server made of it
  | 'redirect-without-host'
  | 'rewrite-invalid'
  | 'file-error'
  | 'not-a-file'
  | 'internal'
  // what a backend or gateway did (rproxy, fauth, cgi, scgi, fcgi, the Python modules)
  | 'upstream-refused'
  | 'upstream-unreachable'
  | 'upstream-timeout'
  | 'upstream-busy'
  | 'upstream-failed'
  | 'upstream-status'
  | 'gateway-exited'
  | 'application-error';

export interface HttpErrorOptions {
  readonly headers?: HeaderPairs;
  /** What went wrong, for the error log; never shown to the client. */
  readonly detail?: string;
}

export class HttpError extends Error {
  readonly headers: HeaderPairs;
  readonly detail: string | undefined;

  constructor(
    readonly status: number,
    readonly code: FailureCode,
    options: HttpErrorOptions = {},
  ) {
    // An HttpError is an answer, not a fault: a stack captured for every 404 of a scanner's flood
    // would cost more than the page. The error log says what failed by `code` and `detail`.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(options.detail ?? `${status} ${STATUS_CODES[status] ?? ''}`.trim());
    Error.stackTraceLimit = limit;
    this.name = 'HttpError';
    this.headers = options.headers ?? [];
    this.detail = options.detail;
  }
}

export function isHttpError(e: unknown): e is HttpError {
  return e instanceof HttpError;
}
