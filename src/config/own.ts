// Lookups by a name read from a file. A plain object answers "constructor", "toString" or
// "__proto__" with what every object inherits; a file's name must find only the table's own entries.
export function own<V>(record: Readonly<Record<string, V>>, key: string): V | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
