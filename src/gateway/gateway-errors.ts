// What a failed gateway exchange becomes (REFERENCE-behaviour.md §16.2): a target that refuses,
// is not there or cannot be reached → 503; a time limit → 504; anything else before the response
// head → 502 (Ferron: 500). Each names the target in the error log.
import { HttpError } from '../http/http-error.js';

const UNAVAILABLE = new Set([
  'ECONNREFUSED',
  'ENOENT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EADDRNOTAVAIL',
  'EACCES',
]);

export function gatewayError(what: string, error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code ?? 'unknown';
  const detail = `${what}: ${(error as Error).message ?? String(error)} (${code})`;
  if (UNAVAILABLE.has(code))
    return new HttpError(
      503,
      code === 'ECONNREFUSED' ? 'upstream-refused' : 'upstream-unreachable',
      {
        detail,
      },
    );
  if (code === 'ETIMEDOUT') return new HttpError(504, 'upstream-timeout', { detail });
  return new HttpError(502, 'upstream-failed', { detail });
}
