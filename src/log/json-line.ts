// The `json` access log format: one JSON object per line, its keys always present and in this
// order (docs/running.md lists them with their types). The file stays printable ASCII whatever a
// client sends: JSON.stringify escapes quotes, backslashes and control characters, and everything
// beyond ASCII is written as \uXXXX, so no header can end the line, forge a second one, or slip a
// terminal escape or a bidirectional override into the file.
import type { AccessLogEntry } from './access-entry.js';
import { isoTime, logIp, seconds } from './log-fields.js';

export function formatJsonLine(e: AccessLogEntry): string {
  const parsed = e.rawLine === undefined;
  return (
    `{"time":"${isoTime(e.time)}","client":${text(logIp(e.clientIp))},` +
    `"user":${e.user ? text(e.user) : 'null'},"host":${optional(e.host)},` +
    `"method":${parsed ? text(e.method) : 'null'},"path":${parsed ? text(e.target) : 'null'},` +
    `"protocol":${text(e.protocol)},"status":${e.status},"bytes":${e.length ?? 'null'},` +
    `"duration":${seconds(e.durationMs ?? 0)},` +
    `"upstream_time":${e.upstreamMs === undefined ? 'null' : seconds(e.upstreamMs)},` +
    `"tls":${optional(e.tlsVersion)},"cache":${optional(e.cacheStatus)},` +
    `"user_agent":${optional(e.userAgent)},"referer":${optional(e.referer)}` +
    `${parsed ? '' : `,"refused":${text(e.rawLine ?? '')}`}}\n`
  );
}

function optional(value: string | undefined): string {
  return value === undefined ? 'null' : text(value);
}

// Printable ASCII but `"` and `\`: nearly every value, written between quotes as it is.
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
// What JSON.stringify leaves as it is but the file must not hold: DEL and everything past ASCII.
const BEYOND_ASCII = /[\x7f-\uffff]/g;
// A header's bytes reach us as Latin-1 characters, one per byte; some of them are past ASCII.
const LATIN1_BEYOND_ASCII = /^[\x00-\xff]*[\x80-\xff][\x00-\xff]*$/;
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function text(value: string): string {
  if (PLAIN.test(value)) return `"${value}"`;
  return JSON.stringify(asText(value)).replace(BEYOND_ASCII, unicodeEscape);
}

/**
 * The text a client meant: a value whose bytes are valid UTF-8 is read as such (a `café` in a
 * Referer logs as café); any other keeps each byte as the Latin-1 character of the same value (a
 * lone \xFF is "\u00ff"), so nothing is lost or replaced.
 */
function asText(value: string): string {
  if (!LATIN1_BEYOND_ASCII.test(value)) return value;
  try {
    return UTF8.decode(Buffer.from(value, 'latin1'));
  } catch {
    return value;
  }
}

function unicodeEscape(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}
