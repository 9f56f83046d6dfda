// The pieces access log lines are made of, shared by every format: the client address, text a
// client chose made safe for a one-line record, the time in the forms logs use, and durations.

const IPV4_MAPPED = /^::ffff:(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/i;

/** An IPv4-mapped IPv6 address as plain IPv4; any other address as it is. */
export function logIp(ip: string): string {
  return IPV4_MAPPED.exec(ip)?.[1] ?? ip;
}

// Client-supplied text must stay inside its field on its own line: anything outside printable
// ASCII becomes \xHH (as nginx and Apache do), and `"` and `\` are backslash-escaped so the
// quoting and the escapes themselves stay unambiguous. Escaping every non-ASCII character, not
// only control characters, also keeps the file correct: Node hands over header bytes as Latin-1
// characters, which would be re-encoded into mojibake if written as they are.
export const escapeField = escaper(String.raw`["\\]|[^\x20-\x7e]`);
// The user (a basic-auth name) is the one unquoted field a client chooses, so a space in it is
// escaped too, or it would shift the fields after it; an empty name is logged as "-".
export const escapeUser = escaper(String.raw`["\\]|[^\x21-\x7e]`);

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

/**
 * A formatter of the time to the second, remembering its last answer: every request needs the
 * timestamp and most arrive within the same second as the previous one.
 */
function perSecond(format: (time: Date) => string): (time: Date) => string {
  let cachedSecond = NaN;
  let cachedTime = '';
  return (time) => {
    const second = Math.floor(time.getTime() / 1000);
    if (second !== cachedSecond) {
      cachedSecond = second;
      cachedTime = format(time);
    }
    return cachedTime;
  };
}

/** `dd/Mon/yyyy:HH:MM:SS ±hhmm` in the local time zone (the Common Log Format's). */
export const clfTime = perSecond((time) => {
  const year = String(time.getFullYear()).padStart(4, '0');
  return (
    `${pad2(time.getDate())}/${MONTHS[time.getMonth()]}/${year}` +
    `:${clock(time)} ${offset(time, '')}`
  );
});

/** ISO 8601, `yyyy-mm-ddTHH:MM:SS±hh:mm`, in the local time zone. */
export const isoTime = perSecond((time) => {
  const year = String(time.getFullYear()).padStart(4, '0');
  return (
    `${year}-${pad2(time.getMonth() + 1)}-${pad2(time.getDate())}` +
    `T${clock(time)}${offset(time, ':')}`
  );
});

function clock(time: Date): string {
  return `${pad2(time.getHours())}:${pad2(time.getMinutes())}:${pad2(time.getSeconds())}`;
}

function offset(time: Date, separator: string): string {
  const minutes = -time.getTimezoneOffset();
  const abs = Math.abs(minutes);
  return `${minutes < 0 ? '-' : '+'}${pad2(Math.floor(abs / 60))}${separator}${pad2(abs % 60)}`;
}

function pad2(value: number): string {
  return String(value).padStart(2, '0');
}

/** Milliseconds as seconds to the millisecond, a number (0.003), as nginx's `$request_time`. */
export function seconds(ms: number): number {
  return Math.round(ms) / 1000;
}
