// An HTTP/1.1 head that never changes (a kept head: respond.ts) is checked once, not on every
// response. `res.writeHead(status, list)` runs Node's two header regexes over every name and value,
// a tenth of a static hit's instructions under callgrind (issue 15). Node writes the fields it holds
// from `setHeader` without checking them again, so a head checked here is handed over in that
// store's form. The store is Node's own (the `kOutHeaders` symbol of node:http's OutgoingMessage):
// it is found and tried once at start, and without it every head takes the checked path.
import { OutgoingMessage, validateHeaderName, validateHeaderValue } from 'node:http';

/** Node's store of fields set with setHeader: lower-case name → [name, value or values]. */
export type NodeFields = Record<string, [string, string | string[]]>;

const FIELDS = findFieldStore();

/** The symbol under which Node keeps a message's fields, if it behaves as this file expects. */
function findFieldStore(): symbol | undefined {
  const probe = new OutgoingMessage();
  const symbol = Object.getOwnPropertySymbols(probe).find((s) => s.description === 'kOutHeaders');
  if (symbol === undefined) return undefined;
  probe.setHeader('X-Probe', 'a');
  probe.appendHeader('X-Probe', 'b');
  const store = (probe as unknown as Record<symbol, unknown>)[symbol] as NodeFields | null;
  const entry = store?.['x-probe'];
  const sameShape =
    entry !== undefined && entry[0] === 'X-Probe' && String(entry[1]) === String(['a', 'b']);
  return sameShape ? symbol : undefined;
}

/**
 * `[name, value, …]` in the form of Node's store, checked as setHeader checks each field; undefined
 * when the store is not available or a field is invalid (the caller's writeHead then throws Node's
 * own error for it, as before).
 */
export function nodeFields(list: readonly string[]): NodeFields | undefined {
  if (FIELDS === undefined) return undefined;
  // Built as a plain object and given a null prototype after: V8 keeps it in fast mode, so Node's
  // for…in over it takes the enumeration cache (a dictionary-mode object, as Object.create(null)
  // makes, cost ~2,000 instructions per head under callgrind).
  const fields = {} as NodeFields;
  try {
    for (let i = 0; i < list.length; i += 2) {
      const name = list[i]!;
      const value = list[i + 1]!;
      validateHeaderName(name);
      validateHeaderValue(name, value);
      const lower = name.toLowerCase();
      // A valid token, which as a key would set the prototype rather than a field.
      if (lower === '__proto__') return undefined;
      // Own keys only: `constructor` or `tostring` is a valid field name too.
      const existing = Object.hasOwn(fields, lower) ? fields[lower] : undefined;
      if (existing === undefined) fields[lower] = [name, value];
      else existing[1] = [existing[1], value].flat();
    }
  } catch {
    return undefined;
  }
  return Object.setPrototypeOf(fields, null) as NodeFields;
}

/**
 * Writes a checked head: the fields go in as though set one by one, then writeHead adds only what
 * Node adds to any head (Date, Connection, Keep-Alive). The store is not written to after the head
 * (setHeader and removeHeader refuse once it is sent), so one object serves every response.
 */
export function writeCheckedHead(
  res: { writeHead(status: number): unknown },
  status: number,
  fields: NodeFields,
): void {
  (res as unknown as Record<symbol, NodeFields>)[FIELDS!] = fields;
  res.writeHead(status);
}
