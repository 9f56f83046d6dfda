// Patterns in configuration files were written for Ferron, whose regexes are Rust's: fancy-regex
// 0.17 (lookaround, backreferences) over the `regex` crate's syntax. Each pattern is translated once,
// at load, into a JavaScript RegExp with the same meaning, using flag `v` (code points, nested
// classes and set operations, as Rust has). What cannot be given the same meaning is refused by
// name, never approximated: a pattern that validates matches what it matched under Ferron.
//
// Meanings that differ and are spelled out: `\d`, `\s`, `\w` and `\b` are Unicode-aware in Rust;
// `\A`, `\z`, `\Z` and the POSIX classes `[[:alpha:]]` have no JavaScript spelling; `.` never matches
// `\n` but matches `\r`; `(?m)` lines end at `\n` only; inline flags may change mid-pattern, and
// (a fancy-regex quirk) `(?i)` inside a group keeps applying after the group ends, while
// `(?i:…)` ends with its group. Case-insensitivity that does not cover the whole pattern is
// spelled out letter by letter, since the JavaScript of Node 20 has no `(?i:…)`.

export class RegexSyntaxError extends Error {}

interface Flags {
  i: boolean;
  m: boolean;
  s: boolean;
  U: boolean;
}

/** One translated piece, and the capture groups certain to have taken part once it matched. */
interface Piece {
  readonly text: string;
  /** `empty` is a flag change such as `(?i)`; `look` a lookaround: neither can be repeated. */
  readonly kind: 'atom' | 'assertion' | 'look' | 'empty';
  readonly captured: ReadonlySet<number>;
}

type Escape =
  | { readonly kind: 'char'; readonly cp: number }
  /** A class in JavaScript syntax (`\p{Nd}`); `cased` when case-insensitivity would change it. */
  | { readonly kind: 'set'; readonly text: string; readonly cased: boolean }
  | { readonly kind: 'assertion'; readonly text: string }
  | { readonly kind: 'backref'; readonly group: number }
  | { readonly kind: 'any' };

type ClassItem =
  | { readonly kind: 'char'; readonly cp: number }
  | { readonly kind: 'range'; readonly from: number; readonly to: number }
  | { readonly kind: 'set'; readonly text: string; readonly cased: boolean }
  | { readonly kind: 'class'; readonly set: ClassSet };

/** `[…]`: unions of items joined left to right by `&&`, `--` and `~~`, then negated. */
interface ClassSet {
  readonly negated: boolean;
  readonly operands: ClassItem[][];
  readonly ops: ('&&' | '--' | '~~')[];
}

// Rust's `\w`: Unicode Alphabetic, marks, decimal digits, connector punctuation, join controls.
const WORD_ITEMS = '\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}';
const WORD = `[${WORD_ITEMS}]`;
const NOT_WORD = `[^${WORD_ITEMS}]`;
const WORD_BOUNDARIES: Readonly<Record<string, string>> = {
  start: `(?<!${WORD})(?=${WORD})`,
  end: `(?<=${WORD})(?!${WORD})`,
  'start-half': `(?<!${WORD})`,
  'end-half': `(?!${WORD})`,
};
const ESCAPED_SETS: Readonly<Record<string, string>> = {
  d: '\\p{Nd}',
  D: '\\P{Nd}',
  s: '\\p{White_Space}',
  S: '\\P{White_Space}',
  w: WORD,
  W: NOT_WORD,
  h: '[0-9A-Fa-f]',
  H: '[^0-9A-Fa-f]',
};
const CONTROL_ESCAPES: Readonly<Record<string, number>> = {
  a: 7,
  b: 8,
  f: 12,
  n: 10,
  r: 13,
  t: 9,
  v: 11,
  e: 27,
  ' ': 32,
};
const POSIX: Readonly<Record<string, readonly (readonly [number, number])[]>> = {
  alnum: [
    [0x30, 0x39],
    [0x41, 0x5a],
    [0x61, 0x7a],
  ],
  alpha: [
    [0x41, 0x5a],
    [0x61, 0x7a],
  ],
  ascii: [[0x00, 0x7f]],
  blank: [
    [0x09, 0x09],
    [0x20, 0x20],
  ],
  cntrl: [
    [0x00, 0x1f],
    [0x7f, 0x7f],
  ],
  digit: [[0x30, 0x39]],
  graph: [[0x21, 0x7e]],
  lower: [[0x61, 0x7a]],
  print: [[0x20, 0x7e]],
  punct: [
    [0x21, 0x2f],
    [0x3a, 0x40],
    [0x5b, 0x60],
    [0x7b, 0x7e],
  ],
  space: [
    [0x09, 0x0d],
    [0x20, 0x20],
  ],
  upper: [[0x41, 0x5a]],
  word: [
    [0x30, 0x39],
    [0x41, 0x5a],
    [0x5f, 0x5f],
    [0x61, 0x7a],
  ],
  xdigit: [
    [0x30, 0x39],
    [0x41, 0x46],
    [0x61, 0x66],
  ],
};
const MAX_DEPTH = 64;
const WHOLE_PATTERN = 'make the whole pattern case-insensitive with a leading (?i)';
const UNFOLDABLE_PROPERTY = `a Unicode property in a case-insensitive part cannot be translated; ${WHOLE_PATTERN}`;
const CASED = /\p{Changes_When_Casemapped}/u;
const SYNTAX = new Set('^$\\.*+?()[]{}|/');
const CLASS_SYNTAX = new Set('^$\\.*+?()[]{}|/&-!#%,:;<=>@`~');
const GROUP_NAME = /^[\p{ID_Start}_][\p{ID_Continue}]*$/u;
const KELVIN = 0x212a;
const LONG_S = 0x17f;

export function compileRegex(source: string): RegExp {
  let translator = new Translator(source, false);
  let body = translator.translate();
  // Case-insensitive and case-sensitive parts together: JavaScript's `i` flag would cover both.
  if (translator.sawInsensitive && translator.sawSensitive) {
    translator = new Translator(source, true);
    body = translator.translate();
  }
  const flags = !translator.spelledOut && translator.sawInsensitive ? 'iv' : 'v';
  try {
    return new RegExp(body, flags);
  } catch (e) {
    throw new RegexSyntaxError(
      (e as Error).message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, ''),
    );
  }
}

const isCased = (cp: number): boolean => CASED.test(String.fromCodePoint(cp));
const hex = (cp: number): string => `\\u{${cp.toString(16)}}`;

function escapeChar(cp: number): string {
  const c = String.fromCodePoint(cp);
  if (SYNTAX.has(c)) return `\\${c}`;
  return cp < 0x20 || cp >= 0x7f ? hex(cp) : c;
}

function escapeClassChar(cp: number): string {
  const c = String.fromCodePoint(cp);
  if (CLASS_SYNTAX.has(c)) return `\\${c}`;
  return cp < 0x20 || cp >= 0x7f ? hex(cp) : c;
}

class Translator {
  private at = 0;
  private flags: Flags = { i: false, m: false, s: false, U: false };
  private groups = 0;
  private readonly names = new Map<string, number>();
  /** Per open sequence, the groups certain to have matched before the current position. */
  private readonly captured: Set<number>[] = [];
  sawInsensitive = false;
  sawSensitive = false;

  /** `spelledOut`: case-insensitive parts are written as `[aA]`, with no `i` flag. */
  constructor(
    private readonly source: string,
    readonly spelledOut: boolean,
  ) {}

  translate(): string {
    const piece = this.alternation(0);
    if (this.at < this.source.length) this.syntax("Unmatched ')'");
    return piece.text;
  }

  /** A construct that cannot be translated, or is wrong in Rust's syntax: the message says where. */
  private fail(message: string, at = this.at): never {
    throw new RegexSyntaxError(`${message} (at character ${at + 1})`);
  }

  /** A plain syntax error, in the words JavaScript's engine has always given it here. */
  private syntax(message: string): never {
    throw new RegexSyntaxError(message);
  }

  private peek(offset = 0): string | undefined {
    return this.source[this.at + offset];
  }

  private startsWith(text: string): boolean {
    return this.source.startsWith(text, this.at);
  }

  private codePoint(): number {
    const cp = this.source.codePointAt(this.at)!;
    this.at += cp > 0xffff ? 2 : 1;
    return cp;
  }

  /** `(?#…)` comments, which fancy-regex skips wherever an atom or a repetition may start. */
  private skipComments(): void {
    while (this.startsWith('(?#')) {
      const start = this.at;
      this.at += 3;
      while (this.peek() !== ')') {
        if (this.peek() === undefined) this.fail('comment "(?#" is not closed', start);
        this.at += this.peek() === '\\' ? 2 : 1;
      }
      this.at++;
    }
  }

  private alternation(depth: number): Piece {
    const branches = [this.sequence(depth)];
    while (this.peek() === '|') {
      this.at++;
      branches.push(this.sequence(depth));
    }
    // A group took part after the alternation only if it did in every branch.
    const [first, ...rest] = branches.map((b) => b.captured);
    const captured = new Set([...first!].filter((g) => rest.every((r) => r.has(g))));
    return { text: branches.map((b) => b.text).join('|'), kind: 'atom', captured };
  }

  private sequence(depth: number): Piece {
    const captured = new Set<number>();
    this.captured.push(captured);
    let text = '';
    for (;;) {
      this.skipComments();
      const c = this.peek();
      if (c === undefined || c === '|' || c === ')') break;
      const atom = this.atom(depth);
      this.skipComments();
      const repeat = this.repetition();
      if (repeat === undefined) {
        text += atom.text;
        for (const g of atom.captured) captured.add(g);
        continue;
      }
      if (atom.kind === 'look' || atom.kind === 'empty') this.syntax('Nothing to repeat');
      text += (atom.kind === 'assertion' ? `(?:${atom.text})` : atom.text) + repeat.text;
      if (repeat.min > 0) for (const g of atom.captured) captured.add(g);
    }
    this.captured.pop();
    return { text, kind: 'atom', captured };
  }

  /** `?`, `*`, `+`, `{n}`, `{n,}`, `{n,m}`, `{,m}`, lazy with `?`; a `{` that is none of these is a literal. */
  private repetition(): { text: string; min: number } | undefined {
    const c = this.peek();
    let min: number;
    let max: number | undefined;
    if (c === '?' || c === '*' || c === '+') {
      this.at++;
      [min, max] = c === '?' ? [0, 1] : [c === '*' ? 0 : 1, undefined];
    } else if (c === '{') {
      const m = /^\{(?:(\d+)|(?=,))(?:(,)(\d*))?\}/.exec(this.source.slice(this.at, this.at + 48));
      if (!m) return undefined;
      this.at += m[0].length;
      min = m[1] === undefined ? 0 : Number(m[1]);
      max = m[2] === undefined ? min : m[3] ? Number(m[3]) : undefined;
    } else {
      return undefined;
    }
    this.skipComments();
    let lazy = false;
    if (this.peek() === '?') {
      this.at++;
      lazy = true;
    }
    if (this.flags.U) lazy = !lazy;
    if (this.peek() === '+')
      this.fail('possessive repetition ("*+", "++", "?+", "{n}+") is not supported');
    const count =
      max === min
        ? `{${min}}`
        : min === 0 && max === 1
          ? '?'
          : max !== undefined
            ? `{${min},${max}}`
            : min === 0
              ? '*'
              : min === 1
                ? '+'
                : `{${min},}`;
    return { text: count + (lazy ? '?' : ''), min };
  }

  private atom(depth: number): Piece {
    const none = new Set<number>();
    const c = this.peek()!;
    switch (c) {
      case '.':
        this.at++;
        return { text: this.flags.s ? '[\\s\\S]' : '[^\\n]', kind: 'atom', captured: none };
      // No JavaScript `m` flag is ever set, so `^` and `$` are the ends of the text.
      case '^':
        this.at++;
        return { text: this.flags.m ? '(?<![^\\n])' : '^', kind: 'assertion', captured: none };
      case '$':
        this.at++;
        return { text: this.flags.m ? '(?![^\\n])' : '$', kind: 'assertion', captured: none };
      case '(':
        return this.group(depth);
      case '[': {
        const insensitive = this.flags.i;
        const open = this.at;
        const set = this.characterClass();
        if (classIsCased(set)) this.noteCase(insensitive);
        return {
          text: this.emitClass(set, insensitive && this.spelledOut, open),
          kind: 'atom',
          captured: none,
        };
      }
      case '*':
      case '+':
      case '?':
        return this.syntax('Nothing to repeat');
      case '\\':
        return this.escapeAtom();
      default: {
        const start = this.at;
        return { text: this.literal(this.codePoint(), start), kind: 'atom', captured: none };
      }
    }
  }

  private escapeAtom(): Piece {
    const none = new Set<number>();
    const start = this.at;
    const e = this.escape(false);
    switch (e.kind) {
      case 'char':
        return { text: this.literal(e.cp, start), kind: 'atom', captured: none };
      case 'set':
        if (e.cased) {
          this.noteCase(this.flags.i);
          if (this.flags.i && this.spelledOut) this.fail(UNFOLDABLE_PROPERTY, start);
        }
        return { text: e.text, kind: 'atom', captured: none };
      case 'assertion':
        return { text: e.text, kind: 'assertion', captured: none };
      case 'any':
        return { text: '[\\s\\S]', kind: 'atom', captured: none };
      case 'backref':
        return { text: this.backreference(e.group, start), kind: 'atom', captured: none };
    }
  }

  private noteCase(insensitive: boolean): void {
    if (insensitive) this.sawInsensitive = true;
    else this.sawSensitive = true;
  }

  private literal(cp: number, at: number): string {
    if (!isCased(cp)) return escapeChar(cp);
    this.noteCase(this.flags.i);
    if (!this.flags.i || !this.spelledOut) return escapeChar(cp);
    return `[${this.foldChar(cp, at).map(escapeClassChar).join('')}]`;
  }

  /** The characters a case-insensitive match of `cp` accepts (Unicode simple case folding). */
  private foldChar(cp: number, at: number): number[] {
    if (cp === KELVIN || cp === 0x6b || cp === 0x4b) return [0x6b, 0x4b, KELVIN];
    if (cp === LONG_S || cp === 0x73 || cp === 0x53) return [0x73, 0x53, LONG_S];
    if (cp < 0x80) return /[a-z]/i.test(String.fromCharCode(cp)) ? [cp | 0x20, cp & ~0x20] : [cp];
    if (isCased(cp)) {
      this.fail(
        `"${String.fromCodePoint(cp)}" in a case-insensitive part cannot be translated (only ASCII letters can); ${WHOLE_PATTERN}`,
        at,
      );
    }
    return [cp];
  }

  private backreference(group: number, start: number): string {
    if (group > this.groups)
      this.fail(`there is no group ${group} before this backreference`, start);
    if (!this.captured.some((set) => set.has(group))) {
      this.fail(
        `the backreference to group ${group} is not certain to follow a match of that group; JavaScript would match it as empty where Ferron fails, so it is not supported here`,
        start,
      );
    }
    this.noteCase(this.flags.i);
    if (this.flags.i && this.spelledOut)
      this.fail(
        `a backreference in a case-insensitive part cannot be translated; ${WHOLE_PATTERN}`,
        start,
      );
    return `(?:\\${group})`;
  }

  private group(depth: number): Piece {
    const open = this.at;
    if (depth >= MAX_DEPTH) this.fail('groups are nested too deeply');
    this.at++;
    this.skipComments();
    let prefix = '(';
    let captures: number | undefined;
    let look = false;
    let restore: Flags | undefined;
    if (
      this.startsWith('?=') ||
      this.startsWith('?!') ||
      this.startsWith('?<=') ||
      this.startsWith('?<!')
    ) {
      prefix = this.startsWith('?<')
        ? `(${this.source.slice(this.at, this.at + 3)}`
        : `(${this.source.slice(this.at, this.at + 2)}`;
      this.at += prefix.length - 1;
      look = true;
    } else if (this.startsWith('?P=')) {
      this.at += 3;
      const name = this.identifier(')');
      return {
        text: this.backreference(this.groupNamed(name, open), open),
        kind: 'atom',
        captured: new Set(),
      };
    } else if (this.startsWith('?P>')) {
      this.fail('subroutine calls "(?P>name)" are not supported', open);
    } else if (this.startsWith('?P<') || this.startsWith('?<') || this.startsWith("?'")) {
      this.at += this.startsWith('?P<') ? 3 : 2;
      const name = this.identifier(this.source[this.at - 1] === "'" ? "'" : '>');
      if (!GROUP_NAME.test(name))
        this.fail(
          `the group name "${name}" is not supported: it must start with a letter or "_"`,
          open,
        );
      captures = ++this.groups;
      this.names.set(name, captures);
      prefix = `(?<${name}>`;
    } else if (this.startsWith('?>')) {
      this.fail('atomic groups "(?>…)" are not supported', open);
    } else if (this.startsWith('?(')) {
      this.fail('conditionals "(?(…)…)" are not supported', open);
    } else if (this.peek() === '?') {
      const scoped = this.inlineFlags(open);
      if (!scoped) return { text: '', kind: 'empty', captured: new Set() };
      restore = scoped;
      prefix = '(?:';
    } else {
      captures = ++this.groups;
    }
    const inner = this.alternation(depth + 1);
    if (this.peek() !== ')') this.syntax('Unterminated group');
    this.at++;
    // Only `(?flags:…)` ends its flags with the group; `(?i)` inside any group keeps applying
    // after it (fancy-regex 0.17 restores flags nowhere else).
    if (restore) this.flags = restore;
    const captured = look ? new Set<number>() : new Set(inner.captured);
    if (captures !== undefined) captured.add(captures);
    return { text: `${prefix}${inner.text})`, kind: look ? 'look' : 'atom', captured };
  }

  /**
   * `(?flags)` changes the flags from here on and gives undefined; `(?flags:` (or plain `(?:`)
   * gives the flags to restore when its group ends.
   */
  private inlineFlags(open: number): Flags | undefined {
    this.at++;
    const before = { ...this.flags };
    let negate = false;
    let letters = 0;
    for (;;) {
      const c = this.peek();
      if (c === undefined) this.syntax('Unterminated group');
      this.at++;
      if (c === ')' || c === ':') {
        if ((c === ')' && letters === 0) || (negate && letters === 0))
          this.fail(`"${this.source.slice(open, this.at)}" names no flag`, open);
        return c === ':' ? before : undefined;
      }
      if (c === '-' && !negate) {
        negate = true;
        continue;
      }
      letters++;
      if (c === 'i' || c === 'm' || c === 's' || c === 'U') this.flags[c] = !negate;
      else if (c === 'u' && negate)
        this.fail('"(?-u)" is not supported (Ferron refuses it too)', open);
      else if (c === 'x')
        this.fail(
          'the x flag (spaces and # comments ignored) is not supported; write the pattern without it',
          open,
        );
      else if (c !== 'u') this.fail(`unknown flag "${c}"`, this.at - 1);
    }
  }

  /** A group name up to `close` (letters, digits, `_`), as fancy-regex reads it. */
  private identifier(close: string): string {
    const start = this.at;
    while (
      this.peek() !== undefined &&
      /[\p{L}\p{N}_]/u.test(String.fromCodePoint(this.source.codePointAt(this.at)!))
    )
      this.codePoint();
    const name = this.source.slice(start, this.at);
    if (name === '' || !this.startsWith(close))
      this.fail(`invalid group name, expected letters, digits or "_" then "${close}"`, start);
    this.at += close.length;
    return name;
  }

  private groupNamed(name: string, at: number): number {
    const group = /^\d+$/.test(name) ? Number(name) : this.names.get(name);
    if (group === undefined)
      this.fail(`no group named "${name}" comes before this backreference`, at);
    return group;
  }

  private escape(inClass: boolean): Escape {
    const start = this.at;
    this.at++;
    if (this.peek() === undefined) this.syntax('\\ at end of pattern');
    const c = this.peek()!;
    if (/\d/.test(c)) {
      if (inClass) this.fail('a backreference cannot stand in a character class', start);
      const digits = /^\d+/.exec(this.source.slice(this.at))![0];
      this.at += digits.length;
      if (Number(digits) === 0)
        this.fail('"\\0" is not supported; write "\\x00" for the NUL character', start);
      return { kind: 'backref', group: Number(digits) };
    }
    if (!inClass) {
      const outside = this.escapeOutsideClass(c, start);
      if (outside) return outside;
    }
    this.at++;
    const set = ESCAPED_SETS[c];
    if (set) return { kind: 'set', text: set, cased: false };
    if (c === 'x' || c === 'u' || c === 'U')
      return { kind: 'char', cp: this.hexEscape({ x: 2, u: 4, U: 8 }[c], start) };
    if (c === 'p' || c === 'P') {
      if (this.peek() === undefined) this.fail(`"\\${c}" needs a property name`, start);
      return { kind: 'set', text: this.property(c === 'P', start), cased: true };
    }
    const control = CONTROL_ESCAPES[c];
    if (control !== undefined) return { kind: 'char', cp: control };
    // In a class these letters stand for themselves, as fancy-regex reads them.
    if (inClass && 'kAzBKG'.includes(c)) return { kind: 'char', cp: c.charCodeAt(0) };
    if (/[A-Za-z]/.test(c)) this.fail(`"\\${c}" is not a valid escape`, start);
    this.at--;
    return { kind: 'char', cp: this.codePoint() };
  }

  private escapeOutsideClass(c: string, start: number): Escape | undefined {
    switch (c) {
      case 'A':
        this.at++;
        return { kind: 'assertion', text: '^' };
      case 'z':
        this.at++;
        return { kind: 'assertion', text: '$' };
      case 'Z':
        this.at++;
        return { kind: 'assertion', text: '(?=\\n*$)' };
      case '<':
      case '>':
        this.at++;
        return { kind: 'assertion', text: WORD_BOUNDARIES[c === '<' ? 'start' : 'end']! };
      case 'b':
      case 'B': {
        this.at++;
        // `\b{2}` repeats `\b`; `\b{start}` names a boundary.
        if (this.peek() === '{' && !/[\d,]/.test(this.peek(1) ?? '')) {
          const braced = /^\{([a-z-]*)\}/.exec(this.source.slice(this.at, this.at + 16));
          const boundary = braced && c === 'b' ? WORD_BOUNDARIES[braced[1]!] : undefined;
          if (!braced || !boundary)
            this.fail(
              `not a valid word boundary (\\b{start}, \\b{end}, \\b{start-half}, \\b{end-half})`,
              start,
            );
          this.at += braced[0].length;
          return { kind: 'assertion', text: boundary };
        }
        const [before, after] = c === 'b' ? ['(?!', '(?='] : ['(?=', '(?!'];
        return {
          kind: 'assertion',
          text: `(?:(?<=${WORD})${before}${WORD})|(?<!${WORD})${after}${WORD}))`,
        };
      }
      case 'k': {
        this.at++;
        const quote = this.peek() === "'";
        if (!quote && this.peek() !== '<') this.fail('"\\k" needs a group name: \\k<name>', start);
        this.at++;
        if (this.peek() === '-' || this.peek() === '+')
          this.fail('relative backreferences "\\k<-1>" are not supported', start);
        return {
          kind: 'backref',
          group: this.groupNamed(this.identifier(quote ? "'" : '>'), start),
        };
      }
      case 'O':
        this.at++;
        return { kind: 'any' };
      case 'K':
        return this.fail('"\\K" (keep what came before out of the match) is not supported', start);
      case 'G':
        return this.fail('"\\G" (where the previous match ended) is not supported', start);
      case 'g':
        return this.fail('subroutine calls "\\g<name>" are not supported', start);
      default:
        return undefined;
    }
  }

  /** `\xHH`, `\uHHHH`, `\UHHHHHHHH`, or any of them as `{H…}` with one to eight digits. */
  private hexEscape(digits: number, start: number): number {
    const fixed = new RegExp(`^[0-9A-Fa-f]{${digits}}`).exec(this.source.slice(this.at));
    const braced = fixed ? null : /^\{([0-9A-Fa-f]{1,8})\}/.exec(this.source.slice(this.at));
    const text = fixed?.[0] ?? braced?.[1];
    if (text === undefined) this.fail('invalid hexadecimal escape', start);
    this.at += (fixed ?? braced)![0].length;
    const cp = parseInt(text, 16);
    if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
      this.fail(`U+${text.toUpperCase()} is not a Unicode scalar value`, start);
    return cp;
  }

  /** `\pL`, `\p{Greek}`, `\p{sc=Greek}`, `\p{sc:Greek}`, `\p{sc!=Greek}` → `\p{…}` as JavaScript spells it. */
  private property(negated: boolean, start: number): string {
    let body: string;
    if (this.peek() === '{') {
      const end = this.source.indexOf('}', this.at);
      if (end < 0) this.fail('"\\p{" is not closed', start);
      body = this.source.slice(this.at + 1, end);
      this.at = end + 1;
    } else {
      body = String.fromCodePoint(this.codePoint());
    }
    const byValue = /^([^=:!]*)(=|:|!=)(.*)$/s.exec(body);
    const name = byValue ? propertyByValue(byValue[1]!, byValue[3]!) : loneProperty(body);
    if (!name) {
      this.fail(
        `the Unicode property "${body}" is unknown under that spelling; write it as JavaScript spells it (\\p{Uppercase_Letter}, \\p{Greek}, \\p{Script=Greek})`,
        start,
      );
    }
    return `\\${negated !== (byValue?.[2] === '!=') ? 'P' : 'p'}{${name}}`;
  }

  private characterClass(): ClassSet {
    this.at++;
    const negated = this.peek() === '^';
    if (negated) this.at++;
    let items: ClassItem[] = [];
    // Leading `-`s and a `]` right after `[` or `[^` are literal.
    while (this.peek() === '-') {
      items.push({ kind: 'char', cp: 0x2d });
      this.at++;
    }
    if (items.length === 0 && this.peek() === ']') {
      items.push({ kind: 'char', cp: 0x5d });
      this.at++;
    }
    const set: ClassSet = { negated, operands: [items], ops: [] };
    for (;;) {
      const c = this.peek();
      if (c === undefined) this.syntax('Unterminated character class');
      if (c === ']') {
        this.at++;
        return set;
      }
      const op = this.source.slice(this.at, this.at + 2);
      if (op === '&&' || op === '--' || op === '~~') {
        this.at += 2;
        set.ops.push(op);
        items = [];
        set.operands.push(items);
      } else if (c === '[') {
        items.push(this.posixClass() ?? { kind: 'class', set: this.characterClass() });
      } else {
        items.push(this.classRange());
      }
    }
  }

  /** `[:alpha:]` or `[:^alpha:]` inside a class; anything else there is a nested class. */
  private posixClass(): ClassItem | undefined {
    const m = /^\[:(\^?)([a-z]+):\]/.exec(this.source.slice(this.at, this.at + 12));
    const ranges = m && POSIX[m[2]!];
    if (!ranges) return undefined;
    this.at += m[0].length;
    const items: ClassItem[] = ranges.map(([from, to]) => ({ kind: 'range', from, to }));
    return { kind: 'class', set: { negated: m[1] === '^', operands: [items], ops: [] } };
  }

  private classRange(): ClassItem {
    const start = this.at;
    const first = this.classItem();
    if (
      this.peek() !== '-' ||
      this.peek(1) === ']' ||
      this.peek(1) === '-' ||
      this.peek(1) === undefined
    )
      return first;
    this.at++;
    const last = this.classItem();
    if (first.kind !== 'char' || last.kind !== 'char')
      this.fail('a range must run between two single characters', start);
    if (first.cp > last.cp) this.syntax('Range out of order in character class');
    return { kind: 'range', from: first.cp, to: last.cp };
  }

  private classItem(): ClassItem {
    if (this.peek() !== '\\') return { kind: 'char', cp: this.codePoint() };
    const e = this.escape(true);
    if (e.kind === 'char' || e.kind === 'set') return e;
    return this.fail('this escape cannot stand in a character class');
  }

  /** A class in `v` syntax; `fold` spells out case-insensitivity (errors point at `open`). */
  private emitClass(set: ClassSet, fold: boolean, open: number): string {
    const unions = set.operands.map((items) =>
      items.map((item) => this.emitItem(item, fold, open)).join(''),
    );
    if (set.ops.length === 0) return `[${set.negated ? '^' : ''}${unions[0]}]`;
    let text = `[${unions[0]}]`;
    // Each operand is bracketed: V8 mishandles a bare character operand under the `i` flag.
    set.ops.forEach((op, k) => {
      const rhs = `[${unions[k + 1]}]`;
      text = op === '~~' ? `[[${text}--${rhs}][${rhs}--${text}]]` : `[${text}${op}${rhs}]`;
    });
    return set.negated ? `[^${text}]` : text;
  }

  private emitItem(item: ClassItem, fold: boolean, open: number): string {
    switch (item.kind) {
      case 'char':
        return (fold ? this.foldChar(item.cp, open) : [item.cp]).map(escapeClassChar).join('');
      case 'range':
        return (fold ? this.foldRange(item.from, item.to, open) : [[item.from, item.to] as const])
          .map(([from, to]) =>
            from === to ? escapeClassChar(from) : `${escapeClassChar(from)}-${escapeClassChar(to)}`,
          )
          .join('');
      case 'set':
        if (fold && item.cased) this.fail(UNFOLDABLE_PROPERTY, open);
        return item.text;
      case 'class':
        return this.emitClass(item.set, fold, open);
    }
  }

  /** A range and what case-insensitivity adds to it; only ASCII letters can be folded. */
  private foldRange(from: number, to: number, open: number): (readonly [number, number])[] {
    const out: (readonly [number, number])[] = [[from, to]];
    const add = (lo: number, hi: number, shift: number) => {
      if (from <= hi && to >= lo) out.push([Math.max(from, lo) + shift, Math.min(to, hi) + shift]);
    };
    add(0x41, 0x5a, 0x20);
    add(0x61, 0x7a, -0x20);
    const has = (...cps: number[]) => cps.some((cp) => cp >= from && cp <= to);
    if (has(0x4b, 0x6b)) out.push([KELVIN, KELVIN]);
    if (has(0x53, 0x73)) out.push([LONG_S, LONG_S]);
    for (let cp = Math.max(from, 0x80); cp <= to; cp++) {
      if (isCased(cp))
        this.fail(
          `a range with non-ASCII letters in a case-insensitive part cannot be translated; ${WHOLE_PATTERN}`,
          open,
        );
    }
    return out;
  }
}

/** Whether case-insensitivity could change what a class matches. */
function classIsCased(set: ClassSet): boolean {
  return set.operands.some((items) =>
    items.some((item) => {
      switch (item.kind) {
        case 'char':
          return isCased(item.cp);
        case 'range':
          return item.to >= 0x80 || (item.from <= 0x7a && item.to >= 0x41);
        case 'set':
          return item.cased;
        case 'class':
          return classIsCased(item.set);
      }
    }),
  );
}

const propertyExists = (name: string): boolean => {
  try {
    // Negated, so a property of strings (which Rust does not have) is refused too.
    new RegExp(`[^\\p{${name}}]`, 'v');
    return true;
  } catch {
    return false;
  }
};

/**
 * Rust matches property names loosely (case, spaces, `_` and `-` ignored, an `is` prefix
 * dropped); JavaScript wants the exact spelling. These are the spellings worth trying.
 */
function spellings(name: string): string[] {
  const trimmed = name.trim();
  const words = trimmed
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .split(/[\s_-]+/)
    .filter((w) => w !== '');
  const out = new Set([trimmed]);
  if (words.length > 0 && words.length <= 4) {
    for (let mask = 0; mask < 1 << words.length; mask++) {
      out.add(
        words
          .map((w, k) =>
            mask & (1 << k) ? w.toUpperCase() : w[0]!.toUpperCase() + w.slice(1).toLowerCase(),
          )
          .join('_'),
      );
    }
  }
  if (/^is./i.test(trimmed)) for (const s of spellings(trimmed.slice(2))) out.add(s);
  return [...out];
}

/** `\p{Name}`: a binary property or general category first, then a script, as Rust looks it up. */
function loneProperty(name: string): string | undefined {
  const candidates = spellings(name);
  return (
    candidates.find(propertyExists) ?? candidates.map((s) => `Script=${s}`).find(propertyExists)
  );
}

const PROPERTY_NAMES: Readonly<Record<string, string>> = {
  generalcategory: 'General_Category',
  gc: 'General_Category',
  script: 'Script',
  sc: 'Script',
  scriptextensions: 'Script_Extensions',
  scx: 'Script_Extensions',
};

function propertyByValue(property: string, value: string): string | undefined {
  const name = PROPERTY_NAMES[property.replace(/[\s_-]/g, '').toLowerCase()];
  return (
    name &&
    spellings(value)
      .map((s) => `${name}=${s}`)
      .find(propertyExists)
  );
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
    const braced =
      template[i + 1] === '{' ? /^\{([A-Za-z0-9_]+)\}/.exec(template.slice(i + 1)) : null;
    const bare = braced ? null : /^[A-Za-z0-9_]+/.exec(template.slice(i + 1));
    const name = braced?.[1] ?? bare?.[0];
    if (name === undefined) {
      literal += '$';
      continue;
    }
    if (literal) parts.push(literal);
    literal = '';
    parts.push({ group: name });
    i += braced ? braced[0].length : name.length;
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
