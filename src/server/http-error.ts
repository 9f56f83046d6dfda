// Errors are values: a stage throws HttpError (or calls ctx.fail) and the one error responder
// renders the page. `headers` are the extras the page must carry (Allow, WWW-Authenticate, Vary…).
import { STATUS_CODES } from 'node:http';

export type HeaderPairs = readonly (readonly [string, string])[];

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly headers: HeaderPairs = [],
    /** What went wrong, for the error log; never shown to the client. */
    readonly detail?: string,
  ) {
    super(detail ?? `${status} ${STATUS_CODES[status] ?? ''}`.trim());
    this.name = 'HttpError';
  }
}

export function isHttpError(e: unknown): e is HttpError {
  return e instanceof HttpError;
}
