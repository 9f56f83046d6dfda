// Which process a request goes to: the less busy of two picked at random (the "power of two
// choices"), so load spreads without a count kept across processes; a slot being replaced is
// skipped.

export function lessBusyOfTwo<T extends { readonly load: number }>(
  slots: readonly (T | undefined)[],
): T | undefined {
  if (slots.length === 1) return slots[0];
  const a = slots[Math.floor(Math.random() * slots.length)];
  let b = slots[Math.floor(Math.random() * slots.length)];
  if (a === b) b = slots.find((s) => s !== undefined && s !== a);
  if (a === undefined) return b;
  if (b === undefined) return a;
  return b.load < a.load ? b : a;
}
