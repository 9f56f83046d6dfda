// The request `portico explain` asks about, read from its arguments as the server would read it off
// the wire: an absolute URL (its authority is the Host, its raw path and query are kept as typed),
// a method and header lines. Anything the server could never receive is a message, not a guess.
import { isIP } from 'node:net';
import { checkFormat } from '../config/formats.js';
import { normalizeAddress } from '../http/ip-list.js';
import type { LocationRequest } from '../plan/location-conditions.js';
import { hostnameOf, VALID_HOST } from '../server/request-handler.js';

export interface ExplainedRequest extends LocationRequest {
  readonly method: string;
  readonly scheme: 'http' | 'https';
  /** The authority, lower-cased, as a Host header. */
  readonly authority: string;
  /** No port, no trailing dot, as the host table is asked. */
  readonly hostname: string;
  /** The address the connection would arrive on: the URL's when it names one, else "". */
  readonly localAddress: string;
  /** Raw, as typed (sanitized later, as the server does). */
  readonly path: string;
  /** `?…` or "". */
  readonly query: string;
  readonly headers: Readonly<Record<string, string>>;
}

const ABSOLUTE = /^(https?):\/\/([^/?#]*)([^#]*)/i;

/** The request, or a message saying what is wrong with the arguments. */
export function explainedRequest(
  url: string,
  method: string | undefined,
  headerLines: readonly string[],
): ExplainedRequest | string {
  const m = ABSOLUTE.exec(url);
  if (!m || m[2] === '' || !URL.canParse(url))
    return `expected an http:// or https:// URL with a host, such as http://example.com/path, got ${JSON.stringify(url)}`;
  const authority = m[2]!.toLowerCase();
  if (!VALID_HOST.test(authority))
    return `the server would refuse the host ${JSON.stringify(m[2])} with 400 (bad-host)`;
  const target = m[3] === '' ? '/' : m[3]!.startsWith('/') ? m[3]! : `/${m[3]}`;
  const q = target.indexOf('?');
  const chosen = method ?? 'GET';
  const methodProblem = checkFormat('http-method', chosen);
  if (methodProblem !== undefined) return `--method: ${methodProblem}`;
  const headers: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    const name = colon < 0 ? '' : line.slice(0, colon).trim();
    const problem =
      colon < 0
        ? `expected "Name: value", got ${JSON.stringify(line)}`
        : (checkFormat('header-name', name) ?? checkFormat('header-value', line.slice(colon + 1)));
    if (problem !== undefined) return `--header: ${problem}`;
    const lower = name.toLowerCase();
    if (lower === 'host') return '--header: the URL gives the host; leave Host out';
    const value = line.slice(colon + 1).trim();
    // Node joins a repeated field with ", " (a Cookie with "; "): the conditions see it so.
    const previous = headers[lower];
    headers[lower] =
      previous === undefined ? value : `${previous}${lower === 'cookie' ? '; ' : ', '}${value}`;
  }
  headers.host = authority;
  const hostname = hostnameOf(authority);
  const literal = hostname.replace(/^\[(.*)\]$/, '$1');
  return {
    method: chosen,
    scheme: m[1]!.toLowerCase() as 'http' | 'https',
    authority,
    hostname,
    localAddress: isIP(literal) === 0 ? '' : normalizeAddress(literal),
    path: q < 0 ? target : target.slice(0, q),
    query: q < 0 ? '' : target.slice(q),
    headers,
  };
}
