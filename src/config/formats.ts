// What each string format of the property table accepts. A checker returns an error message, or
// undefined when the value is fine; messages quote the value so the user sees what was read, except
// a sensitive one (a key, a password hash, an `Authorization` header), which no message shows, and
// the credentials of a URL, which are redacted as `/config` redacts them.
import { isIP } from 'node:net';
import { parseBackendUrl } from './backend-url.js';
import { clip } from './diagnostics.js';
import { findCipherSuite, findCurve, suggestCipherSuite } from './tls-names.js';
import { REDACTED, redactCredentials } from './redact.js';
import { compileRegex, RegexSyntaxError } from './regex.js';
import { didYouMean, MAX_COMPARED } from './suggest.js';
import type { StringFormat } from './types.js';

/** `shown` is the value as a message may show it (see `shown`); `modules`, what `loadModules` may name. */
type Checker = (value: string, shown: string, modules: readonly string[]) => string | undefined;

/** What a message shows for a sensitive value. */
export const HIDDEN = REDACTED;

/** A value from a file as a message shows it: quoted, clipped, URL credentials redacted; a secret not at all. */
export function shown(value: string, secret = false): string {
  return secret ? HIDDEN : JSON.stringify(clip(redactCredentials(value)));
}
const HOST_LABEL = /^(?!-)[A-Za-z0-9_-]{1,63}(?<!-)$/;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// Field values: visible ASCII, spaces, tabs and obs-text; never CR, LF or NUL (header injection).
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
const CONTROL = /[\x00-\x1f\x7f]/;
// RFC 9110 §8.3.1: `type/subtype`, then `; name=value` parameters (a value a token or quoted).
const MEDIA_TYPE =
  /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+\/[!#$%&'*+\-.^_`|~0-9A-Za-z]+(?:[ \t]*;[ \t]*[!#$%&'*+\-.^_`|~0-9A-Za-z]+=(?:[!#$%&'*+\-.^_`|~0-9A-Za-z]+|"(?:[^"\\\x00-\x1f\x7f]|\\[\t\x20-\x7e])*"))*$/;
// RFC 9110 §9 and RFC 5789: a lower-case spelling of one of these is a mistake, never a method.
const STANDARD_METHODS = new Set([
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'DELETE',
  'CONNECT',
  'OPTIONS',
  'TRACE',
  'PATCH',
]);

export function isHostName(name: string): boolean {
  const bare = name.endsWith('.') ? name.slice(0, -1) : name;
  return (
    bare.length > 0 &&
    bare.length <= 253 &&
    bare.split('.').every((label) => HOST_LABEL.test(label))
  );
}

function isPort(text: string): boolean {
  return /^\d{1,5}$/.test(text) && Number(text) >= 1 && Number(text) <= 65535;
}

/** "addr:port", "[v6]:port" or "port" → parts, or undefined when malformed. */
const LOOPBACK_V4 = /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;

/** A host part of `listen` that only this machine can reach. */
export function isLoopback(host: string): boolean {
  return (
    host === 'localhost' || host === '::1' || LOOPBACK_V4.test(host) || /^::ffff:127\./i.test(host)
  );
}

export function parseListen(value: string): { host: string | undefined; port: number } | undefined {
  if (isPort(value)) return { host: undefined, port: Number(value) };
  const v6 = /^\[([^\]]+)\]:(\d+)$/.exec(value);
  if (v6)
    return isIP(v6[1]!) === 6 && isPort(v6[2]!) ? { host: v6[1]!, port: Number(v6[2]) } : undefined;
  const colon = value.lastIndexOf(':');
  if (colon <= 0) return undefined;
  const host = value.slice(0, colon);
  const port = value.slice(colon + 1);
  return (isIP(host) === 4 || host === 'localhost') && isPort(port)
    ? { host, port: Number(port) }
    : undefined;
}

/** The longest Unix socket path Linux binds (`sun_path` holds 108 bytes with the final NUL). */
export const MAX_SOCKET_PATH_BYTES = 107;

/** The path of a `unix:/path` listener, or undefined when `value` names no Unix socket. */
export function unixSocketPath(value: string): string | undefined {
  return value.startsWith('unix:') ? value.slice(5) : undefined;
}

function listenerProblem(v: string, s: string): string | undefined {
  const path = unixSocketPath(v);
  if (path === undefined)
    return parseListen(v)
      ? undefined
      : `expected a port, "address:port", "[IPv6]:port" or "unix:/path", got ${s}`;
  if (!path.startsWith('/') || path.includes('\0'))
    return `expected "unix:" followed by an absolute path, got ${s}`;
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES)
    return `the Unix socket path ${s} is longer than the ${MAX_SOCKET_PATH_BYTES} bytes a socket address holds`;
  return undefined;
}

function isCidr(value: string): boolean {
  const slash = value.indexOf('/');
  if (slash < 0) return false;
  const family = isIP(value.slice(0, slash));
  const bits = value.slice(slash + 1);
  return family !== 0 && /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

function urlOf(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

/** The reason a header value cannot be sent, naming the first character that is in the way. */
function headerValueProblem(v: string, s: string): string | undefined {
  if (FIELD_VALUE.test(v)) return undefined;
  if (CONTROL.test(v)) return `invalid header value ${s} (control characters are not allowed)`;
  const bad = [...v].find((c) => !FIELD_VALUE.test(c))!;
  const which =
    s === HIDDEN
      ? ''
      : `, not ${shown(bad)} (U+${bad.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')})`;
  return `invalid header value ${s}: a header carries visible ASCII and Latin-1 characters only (up to U+00FF)${which}; percent-encode it`;
}

const CHECKERS: Record<StringFormat, Checker> = {
  'http-url': (v, s) => {
    const u = urlOf(v);
    if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:') || !u.hostname) {
      return `expected an http:// or https:// URL, got ${s}`;
    }
    return undefined;
  },
  'backend-url': (v, s) => {
    const parsed = parseBackendUrl(v);
    return typeof parsed === 'string' ? `${parsed}, got ${s}` : undefined;
  },
  'gateway-url': (v, s) => {
    const u = urlOf(v);
    if (u?.protocol === 'tcp:') {
      return u.hostname && u.port ? undefined : `expected tcp://host:port/ with a port, got ${s}`;
    }
    if (u?.protocol === 'unix:') {
      return !u.host && u.pathname.length > 1
        ? undefined
        : `expected unix:///absolute/path, got ${s}`;
    }
    return `expected a tcp://host:port/ or unix:///path URL, got ${s}`;
  },
  email: (v, s) =>
    /^[^\s@<>"]+@[^\s@<>"]+$/.test(v) ? undefined : `expected an e-mail address, got ${s}`,
  regex: (v, s) => {
    try {
      compileRegex(v);
      return undefined;
    } catch (e) {
      return e instanceof RegexSyntaxError
        ? `invalid regular expression ${s}: ${e.message}`
        : String(e);
    }
  },
  ip: (v, s) =>
    isIP(v) !== 0 || v === 'localhost' ? undefined : `expected an IP address, got ${s}`,
  'ip-or-cidr': (v, s) =>
    isIP(v) !== 0 || v === 'localhost' || isCidr(v)
      ? undefined
      : `expected an IP address or CIDR range, got ${s}`,
  domain: (v, s) => {
    if (v === '*') return undefined;
    const name = v.startsWith('*.') ? v.slice(2) : v;
    const withoutPort = name.replace(/:\d+$/, '');
    if (
      isHostName(withoutPort) ||
      isIP(withoutPort) === 4 ||
      /^\[[0-9a-fA-F:.]+\]$/.test(withoutPort)
    )
      return undefined;
    return `expected a host name such as "example.com" or "*.example.com", got ${s}`;
  },
  listen: (v, s) =>
    parseListen(v) ? undefined : `expected a port, "address:port" or "[IPv6]:port", got ${s}`,
  listener: listenerProblem,
  'file-mode': (v, s) =>
    /^0?[0-7]{3}$/.test(v)
      ? undefined
      : `expected an octal permission mode such as "0660", got ${s}`,
  'header-name': (v, s) => (TOKEN.test(v) ? undefined : `invalid header name ${s}`),
  'header-value': headerValueProblem,
  'http-method': (v, s) => {
    if (!TOKEN.test(v)) return `expected an HTTP method such as "GET", got ${s}`;
    const upper = v.toUpperCase();
    return upper !== v && STANDARD_METHODS.has(upper)
      ? `methods are case-sensitive and clients send "${upper}", not ${s}`
      : undefined;
  },
  'url-path': (v, s) =>
    v.startsWith('/') && !CONTROL.test(v)
      ? undefined
      : `expected a URL path starting with "/", got ${s}`,
  'file-extension': (v, s) =>
    /^\.[^/\\\s]+$/.test(v) ? undefined : `expected a file extension such as ".php", got ${s}`,
  'file-name': (v, s) =>
    v.length > 0 && v !== '.' && v !== '..' && !/[/\\\0]/.test(v)
      ? undefined
      : `expected a file name such as "index.html" (no folder), got ${s}`,
  'media-type': (v, s) =>
    MEDIA_TYPE.test(v)
      ? undefined
      : `expected a media type such as "text/html; charset=utf-8", got ${s}`,
  module: (v, s, modules) =>
    modules.includes(v)
      ? undefined
      : `unknown module ${s}${didYouMean(v, modules)} (modules: ${modules.join(', ')})`,
  'cipher-suite': (v, s) => {
    if (findCipherSuite(v)) return undefined;
    const near = v.length <= MAX_COMPARED ? suggestCipherSuite(v) : undefined;
    return `unknown cipher suite ${s}${near ? `; did you mean "${near}"?` : ''}`;
  },
  'ecdh-curve': (v, s) =>
    findCurve(v) ? undefined : `unknown ECDH curve ${s} (x25519, secp256r1, secp384r1, secp521r1)`,
  'env-name': (v, s) =>
    /^[A-Za-z_][A-Za-z0-9_]*$/.test(v) ? undefined : `invalid environment variable name ${s}`,
  // process.env would keep 'x' of 'x\0y' while FastCGI and SCGI sent all of it, and a spawned
  // CGI script or Python worker would not start at all.
  // The value is not quoted: environment variables often hold secrets.
  'env-value': (v) =>
    v.includes('\0') ? 'an environment variable cannot hold a NUL character' : undefined,
  path: (v, s) => (v.length > 0 && !v.includes('\0') ? undefined : `expected a path, got ${s}`),
  command: (v, s) =>
    v.trim().length > 0 && !v.includes('\0')
      ? undefined
      : `expected a program name or path, got ${s}`,
  'rate-limit-key': (v, s) => {
    if (v === 'clientIP' || v === 'uri') return undefined;
    if (!v.startsWith('header:'))
      return `expected "clientIP", "uri" or "header:NAME", got ${s}${didYouMean(v, ['clientIP', 'uri'])}`;
    return TOKEN.test(v.slice(7)) ? undefined : `invalid header name in ${s}`;
  },
};

/**
 * What is wrong with a value of a format, or undefined; a secret value is never shown. `modules`
 * are the names a `module` may be (the property table's).
 */
export function checkFormat(
  format: StringFormat,
  value: string,
  secret = false,
  modules: readonly string[] = [],
): string | undefined {
  return CHECKERS[format](value, shown(value, secret), modules);
}
