// HTTP dates as RFC 9110 §5.6.7 defines them, and nothing looser: IMF-fixdate, and the two obsolete
// forms a recipient must still accept (RFC 850 and asctime). Date.parse takes far more ("UTC", no
// comma, one-digit hours), and a cache that read such an Expires as a date would keep a response
// the origin meant to be stale (RFC 9111 §5.3: an invalid Expires is already expired).

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const IMF_FIXDATE =
  /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\d{2}) ([A-Z][a-z]{2}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT$/;
const RFC_850 =
  /^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\d{2})-([A-Z][a-z]{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) GMT$/;
const ASCTIME =
  /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ([A-Z][a-z]{2}) ([ \d]\d) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/;

/** ms since the epoch, or undefined when `value` is not an HTTP date. */
export function parseHttpDate(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  let m = IMF_FIXDATE.exec(text);
  if (m) return utc(Number(m[3]), m[2]!, m[1]!, m[4]!, m[5]!, m[6]!);
  m = RFC_850.exec(text);
  if (m) {
    // A two-digit year more than 50 years in the future is in the past century (§5.6.7).
    let year = 2000 + Number(m[3]);
    if (year > new Date().getUTCFullYear() + 50) year -= 100;
    return utc(year, m[2]!, m[1]!, m[4]!, m[5]!, m[6]!);
  }
  m = ASCTIME.exec(text);
  if (m) return utc(Number(m[6]), m[1]!, m[2]!.trim(), m[3]!, m[4]!, m[5]!);
  return undefined;
}

function utc(
  year: number,
  monthName: string,
  day: string,
  hour: string,
  minute: string,
  second: string,
): number | undefined {
  const month = MONTHS.indexOf(monthName);
  const [d, h, mi, s] = [Number(day), Number(hour), Number(minute), Number(second)];
  if (month < 0 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return undefined;
  return Date.UTC(year, month, d, h, mi, Math.min(s, 59));
}
