// An access log line written as the operator spells it: text with `{placeholders}`, compiled once
// (when the Plan is compiled) into a list of pieces, so a request's line costs one concatenation
// per piece and no parsing. Text a client chose is escaped as in the combined format (\xHH, \" and
// \\), so a template that quotes a field keeps it in one field on one line.
import type { AccessLogEntry } from './access-entry.js';
import { requestLine } from './clf-line.js';
import { clfTime, escapeField, escapeUser, isoTime, logIp, seconds } from './log-fields.js';

interface Placeholder {
  /** For docs/running.md and the message naming the known ones. */
  readonly doc: string;
  readonly read: (e: AccessLogEntry) => string;
  /** Reads a field only the extended entry has (access-entry.ts). */
  readonly extended?: true;
}

const dash = (value: string | undefined) => (value === undefined ? '-' : escapeField(value));
const parsed = (e: AccessLogEntry) => e.rawLine === undefined;
const fixed3 = (ms: number) => seconds(ms).toFixed(3);

export const PLACEHOLDERS: Readonly<Record<string, Placeholder>> = {
  client: { doc: 'client address (IPv4-mapped IPv6 as IPv4)', read: (e) => logIp(e.clientIp) },
  user: {
    doc: 'basic-authentication user, `-` without one',
    read: (e) => (e.user ? escapeUser(e.user) : '-'),
  },
  time: { doc: 'request start, `10/Oct/2000:13:55:36 +0000`', read: (e) => clfTime(e.time) },
  time_iso: { doc: 'request start, `2000-10-10T13:55:36+00:00`', read: (e) => isoTime(e.time) },
  request: {
    doc: '`method target protocol` (a refused request: the line it sent)',
    read: requestLine,
  },
  method: { doc: 'request method', read: (e) => (parsed(e) ? escapeField(e.method) : '-') },
  path: {
    doc: 'request target as received, query included',
    read: (e) => (parsed(e) ? escapeField(e.target) : '-'),
  },
  protocol: { doc: '`HTTP/1.1`, `HTTP/2.0`', read: (e) => e.protocol },
  status: { doc: 'response status', read: (e) => String(e.status) },
  bytes: { doc: 'body bytes sent', read: (e) => (e.length === undefined ? '-' : String(e.length)) },
  duration: {
    doc: 'seconds from request start to response end, `0.003`',
    read: (e) => fixed3(e.durationMs ?? 0),
    extended: true,
  },
  duration_ms: {
    doc: 'the same in whole milliseconds',
    read: (e) => String(Math.round(e.durationMs ?? 0)),
    extended: true,
  },
  upstream_time: {
    doc: "seconds until a backend's response head (proxy, gateway), `-` without one",
    read: (e) => (e.upstreamMs === undefined ? '-' : fixed3(e.upstreamMs)),
    extended: true,
  },
  tls: { doc: 'TLS version, `-` over plain HTTP', read: (e) => dash(e.tlsVersion), extended: true },
  cache: {
    doc: "what the cache did (nginx's words: `HIT`, `MISS`…), `-` without the cache",
    read: (e) => dash(e.cacheStatus),
    extended: true,
  },
  host: { doc: 'host name requested, `-` without one', read: (e) => dash(e.host), extended: true },
  user_agent: { doc: 'User-Agent, `-` without one', read: (e) => dash(e.userAgent) },
  referer: { doc: 'Referer, `-` without one', read: (e) => dash(e.referer) },
};

export interface CompiledTemplate {
  readonly line: (entry: AccessLogEntry) => string;
  readonly extended: boolean;
}

/** The template compiled, or why it cannot be (1-based character positions). */
export function compileTemplate(template: string): CompiledTemplate | { readonly problem: string } {
  const control = template.search(/[\x00-\x1f\x7f]/);
  if (control >= 0)
    return {
      problem: `a control character at character ${control + 1}: the access log is one line per request`,
    };
  const pieces: (string | Placeholder['read'])[] = [];
  let extended = false;
  let text = '';
  for (let i = 0; i < template.length; i++) {
    const char = template[i]!;
    const at = `at character ${i + 1}`;
    if ((char === '{' || char === '}') && template[i + 1] === char) {
      text += char;
      i++;
      continue;
    }
    if (char === '}') return { problem: `a lone } ${at}: write }} for a brace` };
    if (char !== '{') {
      text += char;
      continue;
    }
    const end = template.indexOf('}', i);
    if (end < 0) return { problem: `a { ${at} is not closed: write {{ for a brace` };
    const name = template.slice(i + 1, end);
    const placeholder = Object.hasOwn(PLACEHOLDERS, name) ? PLACEHOLDERS[name] : undefined;
    if (placeholder === undefined)
      return {
        problem: `unknown placeholder {${name}} ${at}; known: ${Object.keys(PLACEHOLDERS)
          .map((p) => `{${p}}`)
          .join(', ')}`,
      };
    if (text) pieces.push(text);
    text = '';
    pieces.push(placeholder.read);
    extended ||= placeholder.extended === true;
    i = end;
  }
  pieces.push(`${text}\n`);
  return {
    extended,
    line: (entry) => {
      let line = '';
      for (const piece of pieces) line += typeof piece === 'string' ? piece : piece(entry);
      return line;
    },
  };
}
