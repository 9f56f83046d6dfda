// The access log, one line per request in the Combined Log Format that Apache and nginx write
// and log analysers read.
import { LogFile } from './log-file.js';

export interface AccessLogEntry {
  /** As the server knows it; an IPv4-mapped IPv6 address is logged as plain IPv4. */
  clientIp: string;
  /** Basic-auth user, or undefined (or empty) → "-". */
  user: string | undefined;
  /** Request start. */
  time: Date;
  method: string;
  /** Raw request target as received, path?query. */
  target: string;
  /** "HTTP/1.1", "HTTP/2.0". */
  protocol: string;
  /**
   * For a request the HTTP parser refused: what the client sent as its first line, logged in
   * place of method, target and protocol (nginx logs the line it could not parse).
   */
  rawLine?: string;
  status: number;
  /** Body bytes sent (nginx's $body_bytes_sent): 0 for HEAD, what got out of a cut transfer. */
  length: number | undefined;
  referer: string | undefined;
  userAgent: string | undefined;
}

export class AccessLog {
  constructor(private readonly file: LogFile) {}

  /** No path → no access log (undefined), so callers skip formatting entirely. */
  static async open(path: string | undefined): Promise<AccessLog | undefined> {
    return path === undefined ? undefined : new AccessLog(await LogFile.open(path));
  }

  log(entry: AccessLogEntry): void {
    this.file.write(formatAccessLine(entry));
  }

  reopen(): Promise<void> {
    return this.file.reopen();
  }

  close(): Promise<void> {
    return this.file.close();
  }
}

/** `ip - user [time] "method target protocol" status length "referer" "user-agent"\n` */
export function formatAccessLine(entry: AccessLogEntry): string {
  const user = entry.user ? escapeUser(entry.user) : '-';
  const request =
    entry.rawLine === undefined
      ? `${escapeField(entry.method)} ${escapeField(entry.target)} ${entry.protocol}`
      : escapeField(entry.rawLine);
  return (
    `${logIp(entry.clientIp)} - ${user} [${clfTime(entry.time)}] "${request}" ` +
    `${entry.status} ${entry.length ?? '-'} ${quoted(entry.referer)} ${quoted(entry.userAgent)}\n`
  );
}

const IPV4_MAPPED = /^::ffff:(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/i;

function logIp(ip: string): string {
  return IPV4_MAPPED.exec(ip)?.[1] ?? ip;
}

// An absent field is `"-"`, quoted as nginx and Apache write it: the combined format's parsers
// (GoAccess among them) expect every quoted field to be there.
function quoted(value: string | undefined): string {
  return `"${value === undefined ? '-' : escapeField(value)}"`;
}

// Client-supplied text must stay inside its field on its own line: anything outside printable
// ASCII becomes \xHH (as nginx and Apache do), and `"` and `\` are backslash-escaped so the
// quoting and the escapes themselves stay unambiguous. Escaping every non-ASCII character, not
// only control characters, also keeps the file correct: Node hands over header bytes as Latin-1
// characters, which would be re-encoded into mojibake if written as they are.
const escapeField = escaper(String.raw`["\\]|[^\x20-\x7e]`);
// The user (a basic-auth name) is the one unquoted field a client chooses, so a space in it is
// escaped too, or it would shift the fields after it; an empty name is logged as "-".
const escapeUser = escaper(String.raw`["\\]|[^\x21-\x7e]`);

function escaper(chars: string): (value: string) => string {
  // Nearly every field needs no escaping, and a plain test (no g flag, so no lastIndex state) is
  // far cheaper than a replace that finds nothing.
  const find = new RegExp(chars);
  const all = new RegExp(chars, 'gu');
  return (value) => (find.test(value) ? value.replace(all, escapeChar) : value);
}

function escapeChar(char: string): string {
  if (char === '"' || char === '\\') return `\\${char}`;
  const code = char.codePointAt(0) ?? 0;
  // Latin-1 characters are the raw bytes the client sent; anything beyond is logged as its UTF-8.
  const bytes = code <= 0xff ? [code] : Buffer.from(char);
  let escaped = '';
  for (const byte of bytes) escaped += `\\x${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  return escaped;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

// Every request needs the timestamp and most arrive within the same second as the previous one,
// so the formatted string is kept for the second it was made for.
let cachedSecond = NaN;
let cachedTime = '';

/** `dd/Mon/yyyy:HH:MM:SS ±hhmm` in the local time zone. */
function clfTime(time: Date): string {
  const second = Math.floor(time.getTime() / 1000);
  if (second !== cachedSecond) {
    cachedSecond = second;
    cachedTime = formatClfTime(time);
  }
  return cachedTime;
}

function formatClfTime(time: Date): string {
  const offset = -time.getTimezoneOffset();
  const absOffset = Math.abs(offset);
  const year = String(time.getFullYear()).padStart(4, '0');
  return (
    `${pad2(time.getDate())}/${MONTHS[time.getMonth()]}/${year}` +
    `:${pad2(time.getHours())}:${pad2(time.getMinutes())}:${pad2(time.getSeconds())} ` +
    `${offset < 0 ? '-' : '+'}${pad2(Math.floor(absOffset / 60))}${pad2(absOffset % 60)}`
  );
}

function pad2(value: number): string {
  return String(value).padStart(2, '0');
}
