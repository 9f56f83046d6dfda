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

type Part = string | { readonly group: string };

/**
 * A replacement template in Rust's `regex` syntax, as Ferron configurations are written: `$1`,
 * `${1}`, `$name`, `${name}`, `$$` for a dollar. As in Rust, `$1a` names the group "1a" (empty);
 * write `${1}a`. Parsed once; a missing group is empty.
 */
export function compileReplacement(template: string): (match: RegExpExecArray) => string {
  const parts: Part[] = [];
  let literal = '';
  for (let i = 0; i < template.length; i++) {
    const c = template[i]!;
    if (c !== '$') {
      literal += c;
      continue;
    }
    if (template[i + 1] === '$') {
      literal += '$';
      i++;
      continue;
    }
    const braced = template[i + 1] === '{' ? /^\{([A-Za-z0-9_]+)\}/.exec(template.slice(i + 1)) : null;
    const bare = braced ? null : /^[A-Za-z0-9_]+/.exec(template.slice(i + 1));
    const name = braced?.[1] ?? bare?.[0];
    if (name === undefined) {
      literal += '$';
      continue;
    }
    if (literal) parts.push(literal);
    literal = '';
    parts.push({ group: name });
    i += (braced ? braced[0].length : name.length);
  }
  if (literal) parts.push(literal);
  return (match) => {
    let out = '';
    for (const p of parts) {
      if (typeof p === 'string') out += p;
      else out += (/^\d+$/.test(p.group) ? match[Number(p.group)] : match.groups?.[p.group]) ?? '';
    }
    return out;
  };
}
