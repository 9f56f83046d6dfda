// An HTTP/1.1 head that never changes (a kept head: respond.ts) is checked once, not on every
// response. `res.writeHead(status, list)` runs Node's two header regexes over every name and value,
// a tenth of a static hit's instructions under callgrind (issue 15). Node writes the fields it holds
// from `setHeader` without checking them again, so a head checked here is handed over in that
// store's form. The store is Node's own (the `kOutHeaders` symbol of node:http's OutgoingMessage):
// it is found and tried once at start, and without it every head takes the checked path.
import {
  IncomingMessage,
  ServerResponse,
  validateHeaderName,
  validateHeaderValue,
} from 'node:http';

/** Node's store of fields set with setHeader: lower-case name → [name, value or values]. */
export type NodeFields = Record<string, [string, string | string[]]>;

// The names Node's head writer acts on (framing, keep-alive, Date, Content-Disposition's coding):
// each keeps an entry of its own. A run of other fields goes out as one entry, whose value holds
// the run's lines: Node then writes one field rather than four or five, each of which it would
// lower-case to match against these names (~2,800 instructions of a static hit under callgrind).
const NODE_READS = new Set([
  'connection',
  'content-disposition',
  'content-length',
  'cookie',
  'date',
  'expect',
  'keep-alive',
  'trailer',
  'transfer-encoding',
]);

// What Node writes for the probe's store: its run as three lines, after the entry before it.
const PROBE_HEAD =
  /^HTTP\/1\.1 200 OK\r\nContent-Length: 2\r\nX-A: 1\r\nX-B: 3\r\nX-A: 4\r\nDate: [^\r]+\r\nConnection: keep-alive\r\n\r\n$/;

const FIELDS = findFieldStore();

/**
 * The symbol under which Node keeps a message's fields, if Node writes a head from it as this file
 * expects: each entry in order, unchecked, a run as the lines it holds.
 */
function findFieldStore(): symbol | undefined {
  try {
    const request = new IncomingMessage(null as never);
    request.method = 'GET';
    request.httpVersionMajor = request.httpVersionMinor = 1;
    const probe = new ServerResponse(request);
    const symbol = Object.getOwnPropertySymbols(probe).find((s) => s.description === 'kOutHeaders');
    if (symbol === undefined) return undefined;
    const fields = storeOf(['Content-Length', '2', 'X-A', '1', 'X-B', '3', 'X-A', '4'])!;
    (probe as unknown as Record<symbol, NodeFields>)[symbol] = fields;
    probe.writeHead(200);
    const head = (probe as unknown as { _header?: unknown })._header;
    return typeof head === 'string' && PROBE_HEAD.test(head) ? symbol : undefined;
  } catch {
    // A Node whose messages cannot be made or written this way: every head takes writeHead(list).
    return undefined;
  }
}

/**
 * `[name, value, …]` in the form of Node's store, checked as setHeader checks each field; undefined
 * when the store is not available or a field is invalid (the caller's writeHead then throws Node's
 * own error for it, as before).
 */
export function nodeFields(list: readonly string[]): NodeFields | undefined {
  if (FIELDS === undefined) return undefined;
  try {
    return storeOf(list);
  } catch {
    return undefined;
  }
}

/**
 * The store for a list, written as writeHead(list) writes it but for repeated names Node acts on,
 * which go out together at the first's place; undefined for a list no store can hold in order.
 * Throws as setHeader would on an invalid field.
 */
function storeOf(list: readonly string[]): NodeFields | undefined {
  // Built as a plain object and given a null prototype after: V8 keeps it in fast mode, so Node's
  // for…in over it takes the enumeration cache (a dictionary-mode object, as Object.create(null)
  // makes, cost ~2,000 instructions per head under callgrind).
  const fields = {} as NodeFields;
  let run: [string, string] | undefined;
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
    if (NODE_READS.has(lower)) {
      run = undefined;
      if (existing === undefined) fields[lower] = [name, value];
      else existing[1] = [existing[1], value].flat();
    } else if (run !== undefined) {
      // Checked above: no value holds a line break but those put here.
      run[1] += `\r\n${name}: ${value}`;
    } else if (existing === undefined) {
      fields[lower] = run = [name, value];
    } else {
      // A second run led by a name already used as a key: no place for it in order.
      return undefined;
    }
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
