// Validators and conditional requests (RFC 9110 §8.8 and §13).
import { parseHttpDate } from '../http/http-date.js';
import type { IncomingHttpHeaders } from 'node:http';
import type { Encoding } from '../http/encoding-negotiation.js';

/** What a file's validators are made of; `fs.Stats` fits. */
export interface FileIdentity {
  readonly size: number;
  readonly mtimeMs: number;
  readonly ino: number;
}

/**
 * A strong tag from size, modification time (microseconds) and inode: no hashing of contents,
 * and a file replaced by another of the same size in the same microsecond still gets a new inode.
 */
export function entityTag(file: FileIdentity): string {
  return `"${file.size.toString(16)}-${Math.floor(file.mtimeMs * 1000).toString(16)}-${file.ino.toString(16)}"`;
}

/** The tag of a compressed variant: `"…-br"`. The suffixes contain letters hex never has. */
export function variantTag(tag: string, encoding: Encoding): string {
  return `${tag.slice(0, -1)}-${encoding}"`;
}

const VARIANT_SUFFIX = /-(?:br|gzip|deflate)"$/;

/** A tag from a request with any variant suffix removed, so every variant matches its file. */
function baseTag(opaque: string): string {
  return opaque.replace(VARIANT_SUFFIX, '"');
}

/** The modification time as an HTTP date's whole seconds (dates carry no fractions). */
function mtimeSeconds(mtimeMs: number): number {
  return Math.floor(mtimeMs / 1000);
}

function dateSeconds(value: string): number | undefined {
  const ms = parseHttpDate(value);
  return ms === undefined ? undefined : Math.floor(ms / 1000);
}

/** How entity tags compare (RFC 9110 §8.8.3.2). */
export interface TagComparison {
  /** Strong comparison: a weak tag (`W/"…"`) matches nothing. Weak: it matches its strong twin. */
  readonly strong: boolean;
}

/**
 * Whether an If-Match / If-None-Match list names `tag`. `*` matches (the file exists). A malformed
 * list matches nothing.
 */
export function tagListMatches(
  list: string,
  tag: string | undefined,
  { strong }: TagComparison,
): boolean {
  if (list.trim() === '*') return true;
  if (tag === undefined) return false;
  let i = 0;
  while (i < list.length) {
    const c = list.charCodeAt(i);
    if (c === 0x20 || c === 0x09 || c === 0x2c) {
      i++;
      continue;
    }
    let weak = false;
    if (list.startsWith('W/', i)) ((weak = true), (i += 2));
    if (list[i] !== '"') return false;
    const close = list.indexOf('"', i + 1);
    if (close < 0) return false;
    if (!(weak && strong) && baseTag(list.slice(i, close + 1)) === tag) return true;
    i = close + 1;
  }
  return false;
}

export type Precondition = 'pass' | 'not-modified' | 'failed';

/** The precondition headers in RFC 9110 §13.2.2 order. `tag` is the file's base tag, if any. */
export function evaluatePreconditions(
  headers: IncomingHttpHeaders,
  method: string,
  tag: string | undefined,
  mtimeMs: number,
): Precondition {
  const modified = mtimeSeconds(mtimeMs);
  const ifMatch = headers['if-match'];
  if (ifMatch !== undefined) {
    if (!tagListMatches(ifMatch, tag, { strong: true })) return 'failed';
  } else {
    const since = headers['if-unmodified-since'];
    const date = since === undefined ? undefined : dateSeconds(since);
    if (date !== undefined && modified > date) return 'failed';
  }
  const safe = method === 'GET' || method === 'HEAD';
  const ifNoneMatch = headers['if-none-match'];
  if (ifNoneMatch !== undefined) {
    if (tagListMatches(ifNoneMatch, tag, { strong: false }))
      return safe ? 'not-modified' : 'failed';
  } else if (safe) {
    const since = headers['if-modified-since'];
    const date = since === undefined ? undefined : dateSeconds(since);
    if (date !== undefined && modified <= date) return 'not-modified';
  }
  return 'pass';
}

/**
 * Whether a Range applies under If-Range (RFC 9110 §13.1.5): the tag must match strongly (the
 * identity tag: ranges are never compressed), or the date must equal Last-Modified exactly.
 */
export function ifRangeHolds(value: string, tag: string | undefined, mtimeMs: number): boolean {
  const v = value.trim();
  if (v.startsWith('"')) return tag !== undefined && v === tag;
  if (v.startsWith('W/')) return false;
  return dateSeconds(v) === mtimeSeconds(mtimeMs);
}
