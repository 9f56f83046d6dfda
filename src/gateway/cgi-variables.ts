// The CGI/1.1 meta-variables (RFC 3875 §4.1) as REFERENCE-behaviour.md §16.1 lists them, for CGI,
// SCGI and FastCGI alike. Every request header becomes HTTP_<NAME>, except that `Proxy` is left
// out: HTTP_PROXY is read as a proxy setting by many libraries (httpoxy, CVE-2016-5385), as nginx's
// and Apache's advisories recommend.
import type { Ctx } from '../http/ctx.js';

/** The script a request runs, and how its path splits. */
export interface ScriptTarget {
  /** Absolute path of the script file. */
  readonly filename: string;
  /** `/` + the script's path relative to wwwroot. */
  readonly name: string;
  /** `/` + what follows the script in the request path, or empty. */
  readonly pathInfo: string;
  /** wwwroot, absolute. */
  readonly documentRoot: string;
}

export interface VariableOptions {
  /** SCGI=1 (SCGI only). */
  readonly scgi?: boolean;
  /** SCGI and FastCGI send CONTENT_LENGTH 0 for a request without a body; CGI sends none. */
  readonly contentLengthDefault?: boolean;
}

const SKIPPED = new Set(['content-length', 'content-type', 'proxy']);

/**
 * The variables made of decoded paths (text, sent as UTF-8); the others carry what the client
 * sent, which Node reads as Latin-1, so Latin-1 gives back its bytes.
 */
const DECODED = new Set([
  'DOCUMENT_ROOT',
  'SCRIPT_FILENAME',
  'SCRIPT_NAME',
  'PATH_INFO',
  'PATH_TRANSLATED',
]);

/** How a variable's value becomes the bytes a gateway should get. */
export function variableEncoding(name: string): 'utf8' | 'latin1' {
  return DECODED.has(name) ? 'utf8' : 'latin1';
}

/** A variable's value as the bytes a gateway should get. */
export function variableBytes(name: string, value: string): Buffer {
  return Buffer.from(value, variableEncoding(name));
}

/**
 * `environmentVariables` as the entries a request's variables are completed with, made once per
 * stage. They are text from the configuration and go out as UTF-8 whatever their name, where
 * request values are the client's bytes read as Latin-1 (variableEncoding): a value its name sends
 * as Latin-1 is kept as the Latin-1 string of its UTF-8 bytes. ("café" reached PHP as Latin-1,
 * and a character beyond U+00FF as one wrong byte.)
 */
export function configuredVariables(
  environment: Readonly<Record<string, string>>,
): readonly (readonly [string, string])[] {
  return Object.entries(environment).map(([name, value]) => [
    name,
    variableEncoding(name) === 'latin1' ? Buffer.from(value, 'utf8').toString('latin1') : value,
  ]);
}

/** Adds the configured variables the request's own did not set. */
export function addConfigured(
  vars: Map<string, string>,
  configured: readonly (readonly [string, string])[],
): void {
  for (const [name, value] of configured) if (!vars.has(name)) vars.set(name, value);
}

/** HTTP_<NAME> per request header name seen, bounded: clients send the same few names. */
const HEADER_NAMES = new Map<string, string>();
const MAX_HEADER_NAMES = 512;

function headerName(name: string): string {
  let known = HEADER_NAMES.get(name);
  if (known === undefined) {
    known = `HTTP_${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
    if (HEADER_NAMES.size >= MAX_HEADER_NAMES) HEADER_NAMES.clear();
    HEADER_NAMES.set(name, known);
  }
  return known;
}

export function cgiVariables(
  ctx: Ctx,
  script: ScriptTarget,
  options: VariableOptions = {},
): Map<string, string> {
  const req = ctx.req;
  const vars = new Map<string, string>();
  const headers = ctx.outgoing.headers;
  const field = (name: string): string | undefined => {
    const value = headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  };
  const length = field('content-length');
  if (length !== undefined) vars.set('CONTENT_LENGTH', length);
  else if (options.contentLengthDefault) vars.set('CONTENT_LENGTH', '0');
  const type = field('content-type');
  if (type !== undefined) vars.set('CONTENT_TYPE', type);
  vars.set('GATEWAY_INTERFACE', 'CGI/1.1');
  vars.set('QUERY_STRING', ctx.query.startsWith('?') ? ctx.query.slice(1) : ctx.query);
  vars.set('REQUEST_METHOD', ctx.method);
  // The target as the client sent it (before rewriting), as PHP frameworks route by it.
  vars.set('REQUEST_URI', req.url ?? ctx.originalPath);
  vars.set('DOCUMENT_ROOT', script.documentRoot);
  vars.set('SCRIPT_FILENAME', script.filename);
  vars.set('SCRIPT_NAME', script.name);
  vars.set('PATH_INFO', script.pathInfo);
  vars.set('PATH_TRANSLATED', script.pathInfo === '' ? '' : script.filename + script.pathInfo);
  vars.set('SERVER_SOFTWARE', 'Portico');
  vars.set('SERVER_PROTOCOL', `HTTP/${req.httpVersionMajor === 2 ? '2.0' : req.httpVersion}`);
  vars.set('SERVER_ADDR', ctx.localAddress);
  vars.set('SERVER_PORT', String(ctx.localPort));
  if (ctx.hostHeader !== undefined) vars.set('SERVER_NAME', ctx.hostHeader);
  const admin = ctx.resolved.settings.serverAdministratorEmail;
  if (admin !== undefined) vars.set('SERVER_ADMIN', admin);
  vars.set('REMOTE_ADDR', ctx.clientAddress);
  vars.set('REMOTE_PORT', String(ctx.clientPort));
  if (ctx.scheme === 'https') vars.set('HTTPS', 'on');
  if (ctx.user !== undefined) {
    vars.set('AUTH_TYPE', 'Basic');
    vars.set('REMOTE_USER', ctx.user);
  }
  // php-cgi refuses to run without it (cgi.force_redirect); CONTRACT.md sets it for every gateway.
  vars.set('REDIRECT_STATUS', '200');
  if (options.scgi) vars.set('SCGI', '1');
  for (const name of Object.keys(headers)) {
    if (name.startsWith(':') || SKIPPED.has(name)) continue;
    const value = field(name);
    if (value !== undefined) vars.set(headerName(name), value);
  }
  return vars;
}
