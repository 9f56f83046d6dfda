// Content-coding negotiation (RFC 9110 §12.5.3, q-values honoured), one for static files and
// dynamic responses alike: the cache keys a compressed variant by the coding chosen here, so every
// part of Portico that compresses must choose the same way.
import { ZSTD } from './zstd.js';

export type Encoding = 'br' | 'zstd' | 'gzip' | 'deflate';

/**
 * The codings a Node can make, in preference order (among equal q-values the first wins). Brotli
 * before zstd: for web text it makes smaller bodies at the qualities Portico uses, and every client
 * that sends zstd today sends br too; zstd serves the client that takes it alone.
 */
export function encodingsFor(hasZstd: boolean): readonly Encoding[] {
  return hasZstd ? ['br', 'zstd', 'gzip', 'deflate'] : ['br', 'gzip', 'deflate'];
}

/** What this Node makes. */
export const ENCODINGS: readonly Encoding[] = encodingsFor(ZSTD !== undefined);

const Q_VALUE = /^\s*q\s*=\s*(0(?:\.\d{0,3})?|1(?:\.0{0,3})?)\s*$/i;

// Clients send few distinct Accept-Encoding values, so answers are memoized per header value
// (bounded: emptied when full) and the hot path parses nothing.
const MEMO_LIMIT = 256;
const NONE: readonly Encoding[] = [];

/** Negotiation over one list of codings. */
export class Negotiation {
  private readonly memo = new Map<string, readonly Encoding[]>();

  constructor(readonly encodings: readonly Encoding[]) {}

  /** The codings this Accept-Encoding accepts, best first; empty (identity) without the header. */
  accepted(header: string | undefined): readonly Encoding[] {
    if (header === undefined || header === '') return NONE;
    const known = this.memo.get(header);
    if (known !== undefined) return known;
    const accepted = this.parse(header);
    if (this.memo.size >= MEMO_LIMIT) this.memo.clear();
    this.memo.set(header, accepted);
    return accepted;
  }

  /** The coding to send; undefined means identity. */
  chosen(header: string | undefined): Encoding | undefined {
    return this.accepted(header)[0];
  }

  private parse(header: string): readonly Encoding[] {
    const q = new Map<string, number>();
    for (const member of header.split(',')) {
      const semi = member.indexOf(';');
      const coding = (semi < 0 ? member : member.slice(0, semi)).trim().toLowerCase();
      if (coding === '') continue;
      let weight = 1;
      if (semi >= 0) {
        const match = Q_VALUE.exec(member.slice(semi + 1));
        if (!match) continue; // a member with a broken weight is ignored, not guessed at
        weight = Number(match[1]);
      }
      // x-gzip is gzip (RFC 9110 §8.4.1.3); a repeated coding keeps its first weight.
      const name = coding === 'x-gzip' ? 'gzip' : coding;
      if (!q.has(name)) q.set(name, weight);
    }
    const any = q.get('*');
    const weighted = this.encodings
      .map((encoding) => ({ encoding, weight: q.get(encoding) ?? any ?? 0 }))
      .filter((w) => w.weight > 0)
      // Stable: among equal weights, the list's order stands.
      .sort((a, b) => b.weight - a.weight);
    // identity is acceptable unless refused; it wins only when the client ranks it strictly higher.
    const identity = q.get('identity');
    if (weighted.length > 0 && identity !== undefined && identity > weighted[0]!.weight)
      return NONE;
    return weighted.map((w) => w.encoding);
  }
}

const negotiation = new Negotiation(ENCODINGS);

/** The codings a request accepts among those this Node makes, best first. */
export function acceptedEncodings(header: string | undefined): readonly Encoding[] {
  return negotiation.accepted(header);
}

/** The coding to send for this Accept-Encoding; undefined means identity. */
export function negotiateEncoding(header: string | undefined): Encoding | undefined {
  return negotiation.chosen(header);
}
