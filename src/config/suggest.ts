// "Did you mean" for unknown names: the nearest candidate by edit distance (transpositions count
// as one edit), only when it is close enough to be a plausible typo. Names come from files, so the
// work is bounded: a name far longer than any candidate is no typo, and a candidate whose length
// alone puts it out of reach is never compared.

/** Longer names are not compared at all: no property, field, module or cipher name comes near this. */
export const MAX_COMPARED = 64;

/**
 * Optimal-string-alignment distance between a and b, or `limit + 1` as soon as it is certain to
 * exceed `limit`. Three rolling rows, so memory is O(|b|).
 */
export function editDistance(a: string, b: string, limit = Infinity): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  let current = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        v = Math.min(v, before[j - 2]! + 1);
      current[j] = v;
      if (v < rowMin) rowMin = v;
    }
    // Every later row only grows from this one's minimum.
    if (rowMin > limit) return limit + 1;
    [before, previous, current] = [previous, current, before];
  }
  return previous[b.length]!;
}

export function suggest(name: string, candidates: Iterable<string>): string | undefined {
  if (name.length > MAX_COMPARED) return undefined;
  const lower = name.toLowerCase();
  const limit = Math.max(2, Math.floor(name.length / 3));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const c of candidates) {
    // Case slips (`enableHttp2`) are the most common typo: they win outright.
    const distance =
      c.toLowerCase() === lower ? 0 : editDistance(lower, c.toLowerCase(), bestDistance - 1);
    if (distance < bestDistance) {
      best = c;
      bestDistance = distance;
    }
  }
  return best;
}

export function didYouMean(name: string, candidates: Iterable<string>): string {
  const s = suggest(name, candidates);
  return s ? `; did you mean "${s}"?` : '';
}
