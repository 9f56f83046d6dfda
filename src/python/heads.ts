// What the Python bridge gets as a request's head: the WSGI environ (PEP 3333: the CGI variables of
// REFERENCE-behaviour.md §18, native strings holding bytes as Latin-1) or the ASGI scope (ASGI 3
// HTTP and WebSocket connection scopes, bytes as Latin-1 strings). CONTRACT.md: SCRIPT_NAME and
// root_path are the mount prefix, PATH_INFO and path what follows it.
import type { Ctx } from '../http/ctx.js';
import { cgiVariables, variableBytes } from '../gateway/cgi-variables.js';

/** Where a request falls under a mount prefix. */
export interface Mount {
  /** The prefix without its trailing slash; empty for `/`. */
  readonly scriptName: string;
  /** The decoded path after it: empty or starting with `/`. */
  readonly pathInfo: string;
}

/** `wsgiPath: /app/` → `/app`; `/` → empty. */
export function mountPrefix(path: string): string {
  return path.replace(/\/+$/, '');
}

/** The request under the prefix, at a segment boundary (`/app` is not under `/ap`), or undefined. */
export function mounted(prefix: string, decodedPath: string): Mount | undefined {
  if (prefix === '') return { scriptName: '', pathInfo: decodedPath };
  if (!decodedPath.startsWith(prefix)) return undefined;
  const rest = decodedPath.slice(prefix.length);
  if (rest !== '' && !rest.startsWith('/')) return undefined;
  return { scriptName: prefix, pathInfo: rest };
}

/** Variables of the CGI family that mean nothing to a WSGI application. */
const NOT_WSGI = ['PATH_TRANSLATED', 'REDIRECT_STATUS', 'SCRIPT_FILENAME', 'DOCUMENT_ROOT'];

export interface WsgiEnvironOptions {
  /** The application's file (wsgiApplicationPath or wsgidApplicationPath). */
  readonly application: string;
  /** The request has a body, streamed after the head. */
  readonly hasBody: boolean;
}

export function wsgiEnviron(
  ctx: Ctx,
  mount: Mount,
  { application, hasBody }: WsgiEnvironOptions,
): Record<string, string | boolean> {
  const vars = cgiVariables(ctx, {
    filename: application,
    name: mount.scriptName,
    pathInfo: mount.pathInfo,
    documentRoot: '',
  });
  for (const name of NOT_WSGI) vars.delete(name);
  // A request without a body says so; a chunked one has no length, and wsgi.input_terminated.
  if (!hasBody && !vars.has('CONTENT_LENGTH')) vars.set('CONTENT_LENGTH', '0');
  // PEP 3333 requires both; a request without Host names the listener.
  if (!vars.has('SERVER_NAME')) vars.set('SERVER_NAME', ctx.hostname ?? ctx.localAddress);
  const environ: Record<string, string | boolean> = Object.fromEntries(vars);
  // PEP 3333's native strings hold bytes as Latin-1: the decoded paths become their UTF-8 bytes;
  // every other value came from the request as Latin-1 already.
  for (const name of ['SCRIPT_NAME', 'PATH_INFO'])
    environ[name] = variableBytes(name, vars.get(name) ?? '').toString('latin1');
  environ['wsgi.url_scheme'] = ctx.scheme;
  environ.body = hasBody;
  return environ;
}

/** Request fields as ASGI lists them: lower-cased names, HTTP/2's `:authority` as `host`. */
function headerPairs(ctx: Ctx): [string, string][] {
  const pairs: [string, string][] = [];
  const headers = ctx.outgoing.headers;
  for (const name of Object.keys(headers)) {
    if (name.startsWith(':')) continue;
    const value = headers[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const one of value) pairs.push([name, one]);
    else pairs.push([name, value]);
  }
  if (headers.host === undefined && ctx.hostHeader !== undefined)
    pairs.push(['host', ctx.hostHeader]);
  return pairs;
}

export interface AsgiScopeOptions {
  /** The request has a body, streamed after the head. */
  readonly hasBody: boolean;
  /** A WebSocket handshake, with the subprotocols the client offered; absent: an HTTP request. */
  readonly websocket?: { readonly subprotocols: string[] };
}

export function asgiScope(
  ctx: Ctx,
  mount: Mount,
  { hasBody, websocket }: AsgiScopeOptions,
): Record<string, unknown> {
  const req = ctx.req;
  const secure = ctx.scheme === 'https';
  return {
    type: websocket ? 'websocket' : 'http',
    body: hasBody,
    http_version: req.httpVersionMajor === 2 ? '2' : req.httpVersion,
    method: ctx.method,
    scheme: websocket ? (secure ? 'wss' : 'ws') : ctx.scheme,
    // Text, as Python reads it: the decoded path.
    path: mount.pathInfo === '' ? '/' : mount.pathInfo,
    raw_path: ctx.path,
    query_string: ctx.query.startsWith('?') ? ctx.query.slice(1) : ctx.query,
    root_path: mount.scriptName,
    headers: headerPairs(ctx),
    client: [ctx.clientAddress, ctx.clientPort],
    server: [ctx.localAddress, ctx.localPort],
    subprotocols: websocket?.subprotocols ?? [],
    target: req.url ?? ctx.path,
  };
}
