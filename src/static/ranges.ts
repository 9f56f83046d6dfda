// The Range header (RFC 9110 §14): byte ranges only. What the RFC lets a server ignore, it
// ignores, answering 200 with the whole file: another unit, a malformed header, more than
// MAX_RANGES ranges, overlapping ranges (the classic amplification attack) and an empty file
// (where no range but the empty one can be satisfied).

/** Inclusive byte positions, already clamped to the file. */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

export type RangeRequest =
  | { readonly kind: 'whole' }
  | { readonly kind: 'unsatisfiable' }
  | { readonly kind: 'ranges'; readonly ranges: readonly ByteRange[] };

export const MAX_RANGES = 32;

const WHOLE: RangeRequest = { kind: 'whole' };
const UNSATISFIABLE: RangeRequest = { kind: 'unsatisfiable' };
const INT_RANGE = /^(\d+)-(\d*)$/;
const SUFFIX_RANGE = /^-(\d+)$/;

export function parseRange(header: string, size: number): RangeRequest {
  if (size === 0) return WHOLE;
  const eq = header.indexOf('=');
  if (eq < 0 || header.slice(0, eq).trim().toLowerCase() !== 'bytes') return WHOLE;
  const specs = header.slice(eq + 1).split(',');
  if (specs.length > MAX_RANGES) return WHOLE;
  const ranges: ByteRange[] = [];
  let valid = 0;
  for (const raw of specs) {
    const spec = raw.trim();
    if (spec === '') continue; // empty list members are allowed (RFC 9110 §5.6.1)
    valid++;
    const int = INT_RANGE.exec(spec);
    if (int) {
      const first = Number(int[1]);
      const last = int[2] === '' ? Infinity : Number(int[2]);
      if (last < first) return WHOLE; // an invalid range-spec makes the whole header invalid
      if (first < size) ranges.push({ start: first, end: Math.min(last, size - 1) });
      continue;
    }
    const suffix = SUFFIX_RANGE.exec(spec);
    if (!suffix) return WHOLE;
    const length = Number(suffix[1]);
    if (length > 0) ranges.push({ start: Math.max(0, size - length), end: size - 1 });
  }
  if (valid === 0) return WHOLE;
  if (ranges.length === 0) return UNSATISFIABLE;
  if (ranges.length > 1 && overlap(ranges)) return WHOLE;
  return { kind: 'ranges', ranges };
}

function overlap(ranges: readonly ByteRange[]): boolean {
  const sorted = [...ranges].sort((a, b) => a.start - b.start);
  for (let i = 1; i < sorted.length; i++) if (sorted[i]!.start <= sorted[i - 1]!.end) return true;
  return false;
}
