// The Common and Combined Log Formats, as Apache and nginx write them and log analysers read them;
// combined is the access log's default.
import type { AccessLogEntry } from './access-entry.js';
import { clfTime, escapeField, escapeUser, logIp } from './log-fields.js';

/** `ip - user [time] "method target protocol" status length "referer" "user-agent"\n` */
export function formatAccessLine(entry: AccessLogEntry): string {
  const user = entry.user ? escapeUser(entry.user) : '-';
  return (
    `${logIp(entry.clientIp)} - ${user} [${clfTime(entry.time)}] "${requestLine(entry)}" ` +
    `${entry.status} ${entry.length ?? '-'} ${quoted(entry.referer)} ${quoted(entry.userAgent)}\n`
  );
}

/** The Common Log Format: the combined line without referer and user agent. */
export function formatCommonLine(entry: AccessLogEntry): string {
  const user = entry.user ? escapeUser(entry.user) : '-';
  return (
    `${logIp(entry.clientIp)} - ${user} [${clfTime(entry.time)}] "${requestLine(entry)}" ` +
    `${entry.status} ${entry.length ?? '-'}\n`
  );
}

/** `method target protocol`, or what a request the parser refused sent as its first line. */
export function requestLine(entry: AccessLogEntry): string {
  return entry.rawLine === undefined
    ? `${escapeField(entry.method)} ${escapeField(entry.target)} ${entry.protocol}`
    : escapeField(entry.rawLine);
}

// An absent field is `"-"`, quoted as nginx and Apache write it: the combined format's parsers
// (GoAccess among them) expect every quoted field to be there.
function quoted(value: string | undefined): string {
  return `"${value === undefined ? '-' : escapeField(value)}"`;
}
