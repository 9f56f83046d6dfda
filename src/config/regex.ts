// Patterns in configuration files were written for Ferron, whose regexes are Rust's. The common
// Rust-only spellings are translated to JavaScript once, at load: leading inline flags `(?i)`,
// `(?m)`, `(?s)` become RegExp flags and `(?P<name>` becomes `(?<name>`.

export class RegexSyntaxError extends Error {}

const LEADING_FLAGS = /^\(\?([a-zA-Z]+)\)/;

export function compileRegex(source: string, extraFlags = ''): RegExp {
  let body = source;
  let flags = extraFlags;
  const m = LEADING_FLAGS.exec(body);
  if (m) {
    for (const f of m[1]!) {
      if (f !== 'i' && f !== 'm' && f !== 's') throw new RegexSyntaxError(`inline flag "${f}" is not supported (only i, m and s)`);
      if (!flags.includes(f)) flags += f;
    }
    body = body.slice(m[0].length);
  }
  body = body.replaceAll('(?P<', '(?<');
  try {
    return new RegExp(body, flags);
  } catch (e) {
    throw new RegexSyntaxError((e as Error).message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, ''));
  }
}
