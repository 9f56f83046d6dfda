// A light scan of KDL text for what the parser does not report: the blocks a file leaves open
// (the parser only says "Invalid node children at end of input") and the line comments that
// `convert` carries over. Strings and comments are skipped so that a brace or `//` inside them
// does not count; KDL 2 raw strings (#"…"#) and KDL 1's (r#"…"#) alike.

export interface OpenBlock {
  /** The node whose children block it is (the first word of its line). */
  readonly name: string;
  readonly line: number;
  readonly col: number;
}

export interface LineComment {
  readonly line: number;
  /** What follows `//`. */
  readonly text: string;
}

interface Scan {
  /** The blocks still open at the end, outermost first. */
  readonly open: OpenBlock[];
  readonly comments: LineComment[];
}

function scan(text: string): Scan {
  const open: OpenBlock[] = [];
  const comments: LineComment[] = [];
  let line = 1;
  let lineStart = 0;
  let i = 0;
  const skipTo = (end: string): void => {
    const at = text.indexOf(end, i);
    const stop = at < 0 ? text.length : at + end.length;
    for (let j = i; j < stop; j++) if (text[j] === '\n') ((line += 1), (lineStart = j + 1));
    i = stop;
  };
  while (i < text.length) {
    const c = text[i]!;
    if (c === '\n') {
      line += 1;
      lineStart = ++i;
    } else if (c === '/' && text[i + 1] === '/') {
      const end = text.indexOf('\n', i);
      comments.push({ line, text: text.slice(i + 2, end < 0 ? text.length : end).trimEnd() });
      i = end < 0 ? text.length : end;
    } else if (c === '/' && text[i + 1] === '*') ((i += 2), skipTo('*/'));
    else if (c === '"') {
      i += 1;
      while (i < text.length && text[i] !== '"') {
        if (text[i] === '\\') i += 1;
        if (text[i] === '\n') ((line += 1), (lineStart = i + 1));
        i += 1;
      }
      i += 1;
    } else if (
      (c === '#' || (c === 'r' && text[i + 1] === '#')) &&
      /^r?#+"/.test(text.slice(i, i + 80))
    ) {
      const hashes = /^r?(#+)"/.exec(text.slice(i, i + 80))![1]!;
      i += text.slice(i).indexOf('"') + 1;
      skipTo(`"${hashes}`);
    } else if (c === '{') {
      const name = /^\s*([^\s{;]+)/.exec(text.slice(lineStart, i))?.[1] ?? '(a node)';
      open.push({ name, line, col: i - lineStart + 1 });
      i += 1;
    } else if (c === '}') {
      open.pop();
      i += 1;
    } else i += 1;
  }
  return { open, comments };
}

/** The blocks still open at the end of `text`, innermost first. */
export function openBlocks(text: string): OpenBlock[] {
  return scan(text).open.reverse();
}

/** The `//` comments of `text`, in order. */
export function lineComments(text: string): LineComment[] {
  return scan(text).comments;
}
