// What a failed exchange with a backend becomes (REFERENCE §14): refused, unreachable or not
// found → 503; no connection within the connect timeout → 504; anything else before a complete
// response head → 502. Each names the backend in the error log, credentials redacted.
import { HttpError, isHttpError } from '../http/http-error.js';
import type { Backend } from './backend.js';

const UNAVAILABLE = new Set([
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EADDRNOTAVAIL',
]);
const CONNECT_TIMED_OUT = new Set(['UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT']);
// A Unix socket that is not there: nothing reached a backend (still a 502, as Ferron's other
// connect errors).
const NO_SOCKET = 'ENOENT';

function codeOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** The connection itself failed: nothing reached the backend, and another one may be tried. */
export function isConnectFailure(error: unknown): boolean {
  const code = codeOf(error);
  return (
    code !== undefined &&
    (UNAVAILABLE.has(code) ||
      CONNECT_TIMED_OUT.has(code) ||
      code === NO_SOCKET ||
      code.startsWith('ERR_SSL') ||
      TLS_VERIFY.has(code))
  );
}

// Certificate verification failures (Node reports OpenSSL's reason as the code).
const TLS_VERIFY = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** `role` names the exchange in the error log: `proxy to`, `authentication at`. */
export function upstreamError(backend: Backend, error: unknown, role = 'proxy to'): HttpError {
  // The backend's gate refused it (every connection busy): its own answer.
  if (isHttpError(error)) return error;
  const code = codeOf(error) ?? 'unknown';
  const detail = `${role} ${backend.shown}: ${(error as Error).message ?? String(error)} (${code})`;
  if (UNAVAILABLE.has(code))
    return new HttpError(
      503,
      code === 'ECONNREFUSED' ? 'upstream-refused' : 'upstream-unreachable',
      { detail },
    );
  if (CONNECT_TIMED_OUT.has(code) || code === 'UND_ERR_HEADERS_TIMEOUT')
    return new HttpError(504, 'upstream-timeout', { detail });
  return new HttpError(502, 'upstream-failed', { detail });
}
