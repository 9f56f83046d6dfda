// KDL text → a parsed document, or its syntax errors reported with their true positions. KDL 1.0
// is the documented syntax; KDL 2.0 files (`#true`) are read too. kdl.ts reads the document.
import type { Document } from '@bgotink/kdl';
import { parse as parseV1 } from '@bgotink/kdl/v1-compat';
import { parse as parseV2 } from '@bgotink/kdl';
import { clip, type Diagnostics } from './diagnostics.js';
import { openBlocks } from './kdl-scan.js';

interface KdlError extends Error {
  start?: { line: number; column: number; offset: number };
  token?: { text: string };
  errors?: KdlError[];
}

// People (and CONTRACT.md's own example) write `{ a 1; b 2 }`: KDL 1.0's grammar wants a terminator
// after the last node before `}`, which KDL 2.0 dropped. Inserting that `;` changes no line, and
// the columns after it on its line are counted back (Terminators), so every position reported is
// true to the file.
const MAX_TERMINATOR_FIXES = 10_000;

/** The `;`s inserted, by line, at their columns in the text as finally parsed. */
export class Terminators {
  private readonly byLine = new Map<number, number[]>();

  /** One more `;` at this line and column of the current text; those right of it move along. */
  add(line: number, column: number): void {
    const columns = this.byLine.get(line) ?? [];
    for (let i = 0; i < columns.length; i++) if (columns[i]! >= column) columns[i]!++;
    columns.push(column);
    this.byLine.set(line, columns);
  }

  /** The column in the file of a column in the parsed text. */
  column(line: number, column: number): number {
    const columns = this.byLine.get(line);
    return columns ? column - columns.filter((c) => c < column).length : column;
  }
}

type Parsed =
  | { ok: true; doc: Document; terminators: Terminators }
  | { ok: false; error: unknown; terminators: Terminators };

function parseKdlDocument(text: string): Parsed {
  const looksV2 = /(^|[\s=(])#(true|false|null|inf|-inf|nan)\b|(^|[\s=])#+"/.test(text);
  const attempts = looksV2 ? [parseVersion2, parseVersion1] : [parseVersion1, parseVersion2];
  let firstFailure: Parsed | undefined;
  for (const attempt of attempts) {
    const terminators = new Terminators();
    try {
      return { ok: true, doc: attempt(text, terminators), terminators };
    } catch (error) {
      firstFailure ??= { ok: false, error, terminators };
    }
  }
  return firstFailure!;
}

function parseVersion2(text: string): Document {
  return parseV2(text, { as: 'document', storeLocations: true });
}

function parseVersion1(text: string, terminators: Terminators): Document {
  let source = text;
  for (let fixes = 0; ; fixes++) {
    try {
      return parseV1(source, { storeLocations: true });
    } catch (e) {
      // The other errors are reported once these are fixed, so their positions come without noise.
      const missing = flatten(e as KdlError).flatMap((err) =>
        err.message.startsWith('Missing node terminator') && err.token?.text === '}' && err.start
          ? [err.start]
          : [],
      );
      if (fixes >= MAX_TERMINATOR_FIXES || missing.length === 0) throw e;
      const unique = [...new Map(missing.map((m) => [m.offset, m])).values()].sort(
        (a, b) => b.offset - a.offset,
      );
      for (const at of unique) {
        source = `${source.slice(0, at.offset)};${source.slice(at.offset)}`;
        terminators.add(at.line, at.column);
      }
    }
  }
}

function flatten(e: KdlError): KdlError[] {
  return e.errors && e.errors.length > 0 ? e.errors.flatMap(flatten) : [e];
}

/** The document, or undefined with each syntax error reported. */
export function parseKdlText(
  text: string,
  file: string,
  diags: Diagnostics,
): { doc: Document; terminators: Terminators } | undefined {
  const parsed = parseKdlDocument(text);
  if (parsed.ok) return parsed;
  for (const err of flatten(parsed.error as KdlError)) {
    const line = err.start?.line ?? 1;
    const pos = { file, line, col: parsed.terminators.column(line, err.start?.column ?? 1) };
    const open = /at end of input/.test(err.message) ? openBlocks(text) : [];
    if (open.length > 0) {
      const [inner] = open;
      const names = open.map((b) => `${b.name} (line ${b.line})`).join(', ');
      diags.error(
        { file, line: inner!.line, col: inner!.col },
        '',
        `KDL syntax: the file ends inside a block: a closing } is missing for ${names}`,
      );
      continue;
    }
    diags.error(pos, '', `KDL syntax: ${syntaxMessage(err.message.replace(/ at \d+:\d+$/, ''))}`);
  }
  return undefined;
}

// The parser's messages that quote the file, without the quote. A syntax error comes before the
// tree, so nothing tells a sensitive value (`auth_token #s3cret`) from any other text, and a token
// may be a megabyte long; the position shows where the text is. One-character tokens (`}`) stay.
const QUOTING: readonly (readonly [RegExp, string])[] = [
  [/^(Unexpected token) (?!".", ).*?(, did you forget to quote an identifier\?)$/s, '$1$2'],
  [
    /^(Invalid keyword) .*?(, (?:did you mean #[a-z-]+\?|surround it with quotes to use a string|add a leading # to use the keyword or surround with quotes to make it a string))$/s,
    '$1$2',
  ],
  [/^(Invalid keyword) .*?, (keywords are case sensitive), write .*$/s, '$1: $2'],
  [/^(Invalid (?:unicode )?escape) .*$/s, '$1'],
  [/^(Expected newline or single-line comment after backslash) but got .*$/s, '$1'],
];

/** A parser message as Portico shows it: no text from the file, and bounded whatever the parser says. */
function syntaxMessage(message: string): string {
  const rule = QUOTING.find(([pattern]) => pattern.test(message));
  return clip(rule ? message.replace(rule[0], rule[1]) : message, 200);
}
