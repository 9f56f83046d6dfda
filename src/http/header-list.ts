// Looking up a name in a response head held as a flat [name, value, name, value…] list.

/** Where `lower` is named in a [name, value, …] list; -1 when it is not. */
export function indexOfHeader(headers: readonly string[], lower: string): number {
  // Compared by length first: most names differ there, and no string is allocated.
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i]!;
    if (name.length === lower.length && name.toLowerCase() === lower) return i;
  }
  return -1;
}

export function hasHeader(headers: readonly string[], lower: string): boolean {
  return indexOfHeader(headers, lower) >= 0;
}
