// Cache-Control (RFC 9111 §5.2): directive names are case-insensitive, arguments are tokens or
// quoted strings (which may hold commas: `no-cache="Set-Cookie, X-Id"`). A directive given twice
// with different arguments is invalid (§4.2.1): its lifetime counts as zero, so the response is
// stale, as the section encourages.

export interface Directives {
  has(name: string): boolean;
  /** The argument, unquoted; undefined when absent or given without one. */
  argument(name: string): string | undefined;
  /** A delta-seconds argument (§1.2.2); undefined when absent, 0 when malformed or conflicting. */
  seconds(name: string): number | undefined;
  /** A qualified form's field names (`no-cache="a, b"`), lower-cased. */
  fields(name: string): readonly string[];
}

// §1.2.2: a delta-seconds too large for an integer is taken as 2^31.
const MAX_DELTA_SECONDS = 2 ** 31;
const DIGITS = /^[0-9]+$/;

class ParsedDirectives implements Directives {
  constructor(
    private readonly args: ReadonlyMap<string, string | true>,
    private readonly conflicting: ReadonlySet<string>,
  ) {}

  has(name: string): boolean {
    return this.args.has(name);
  }

  argument(name: string): string | undefined {
    const value = this.args.get(name);
    return typeof value === 'string' ? value : undefined;
  }

  seconds(name: string): number | undefined {
    const value = this.args.get(name);
    if (value === undefined) return undefined;
    if (value === true || this.conflicting.has(name) || !DIGITS.test(value)) return 0;
    return Math.min(Number(value), MAX_DELTA_SECONDS);
  }

  fields(name: string): readonly string[] {
    const value = this.argument(name);
    if (value === undefined) return [];
    return value
      .split(',')
      .map((f) => f.trim().toLowerCase())
      .filter((f) => f !== '');
  }
}

export const NO_DIRECTIVES: Directives = new ParsedDirectives(new Map(), new Set());

/** Directives already parsed elsewhere (CDN-Cache-Control's dictionary), by lower-case name. */
export function directivesOf(args: ReadonlyMap<string, string | true>): Directives {
  return new ParsedDirectives(args, new Set());
}

/** Every Cache-Control field line of a message, as Node gives them (joined or as a list). */
export function parseCacheControl(value: string | readonly string[] | undefined): Directives {
  if (value === undefined) return NO_DIRECTIVES;
  const text = typeof value === 'string' ? value : value.join(',');
  if (text.trim() === '') return NO_DIRECTIVES;
  const args = new Map<string, string | true>();
  const conflicting = new Set<string>();
  let i = 0;
  while (i < text.length) {
    const comma = nextSeparator(text, i);
    const part = text.slice(i, comma);
    i = comma + 1;
    const eq = part.indexOf('=');
    const name = (eq < 0 ? part : part.slice(0, eq)).trim().toLowerCase();
    if (name === '') continue;
    const arg = eq < 0 ? true : unquote(part.slice(eq + 1).trim());
    const previous = args.get(name);
    if (previous !== undefined && previous !== arg) conflicting.add(name);
    args.set(name, arg);
  }
  return new ParsedDirectives(args, conflicting);
}

/** The next comma outside a quoted string, or the end. */
function nextSeparator(text: string, from: number): number {
  let quoted = false;
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (quoted && c === '\\') i++;
    else if (c === '"') quoted = !quoted;
    else if (c === ',' && !quoted) return i;
  }
  return text.length;
}

function unquote(value: string): string {
  if (value.length < 2 || !value.startsWith('"') || !value.endsWith('"')) return value;
  return value.slice(1, -1).replace(/\\(.)/g, '$1');
}
