// Comments for `convert`: read from the source text, since neither parser's
// tree keeps them where the raw tree can use them, and attached to the raw entry they stand before
// (a comment at the end of a line goes with that line's entry). Each writer puts an entry's
// comments on the lines before it; what follows the last entry ends the file.
import { Parser } from 'yaml';
import { lineComments } from './kdl-scan.js';
import type { RawEntry, RawMap, RawNode } from './raw.js';
import type { Syntax } from './load.js';

export interface SourceComment {
  readonly line: number;
  /** The text after `#` or `//`. */
  readonly text: string;
}

/** The comments of a configuration text, in order. */
export function commentsOf(text: string, syntax: Syntax): SourceComment[] {
  if (syntax === 'kdl') return lineComments(text);
  const lineStarts = [0];
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lineStarts.push(i + 1);
  const lineAt = (offset: number): number => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
  const found: SourceComment[] = [];
  // The parser's concrete syntax tree holds every comment as a token with its offset.
  const walk = (token: unknown): void => {
    if (Array.isArray(token)) return token.forEach(walk);
    if (token === null || typeof token !== 'object') return;
    const t = token as { type?: string; offset?: number; source?: string };
    if (t.type === 'comment' && typeof t.offset === 'number' && typeof t.source === 'string')
      found.push({ line: lineAt(t.offset), text: t.source.slice(1).trimEnd() });
    for (const value of Object.values(token)) if (typeof value === 'object') walk(value);
  };
  for (const token of new Parser().parse(text)) walk(token);
  return found.sort((a, b) => a.line - b.line);
}

/**
 * Gives each comment to the first entry written on its line or after it; returns the comments
 * that no entry follows.
 */
export function attachComments(root: RawMap, comments: readonly SourceComment[]): string[] {
  const entries: RawEntry[] = [];
  const collect = (node: RawNode): void => {
    if (node.kind === 'list') node.items.forEach(collect);
    else if (node.kind === 'map')
      for (const e of node.entries) {
        entries.push(e);
        collect(e.value);
      }
  };
  collect(root);
  entries.sort((a, b) => a.keyPos.line - b.keyPos.line || a.keyPos.col - b.keyPos.col);
  const end: string[] = [];
  let next = 0;
  for (const comment of comments) {
    while (next < entries.length && entries[next]!.keyPos.line < comment.line) next += 1;
    const entry = entries[next];
    if (entry === undefined) end.push(comment.text);
    else (entry.comments ??= []).push(comment.text);
  }
  return end;
}
