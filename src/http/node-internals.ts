// The two places Portico reaches into Node's private internals, because each pays (the reasons are
// with each). Each is tried once by a self-test on the Node it runs on; when the self-test fails,
// Portico takes the public API instead, slower but with the same results, so a Node upgrade costs
// speed, never correctness.
import { IncomingMessage, ServerResponse } from 'node:http';
import { Duplex } from 'node:stream';
import type { SecureContext, SecureContextOptions, Server as TlsServer } from 'node:tls';

/** Node's store of a response's fields (setHeader's): lower-case name → [name, value or values]. */
export type FieldStore = Record<string, [string, string | string[]]>;

/** A response Node writes a head for. */
interface HeadWriter {
  writeHead(status: number): unknown;
}

// ── A head's fields, checked once ──────────────────────────────────────────────────────────────
// `res.writeHead(status, list)` runs Node's header checks (two regular expressions) over every name
// and value of every response. A head that never changes (respond.ts's kept heads: a static file,
// an error page) is set field by field with setHeader once, which checks each field, and the
// store setHeader filled is handed to every response after: Node writes a head from that store
// without checking it again. The store is the `kOutHeaders` symbol of node:http's OutgoingMessage.

// A list whose head the self-test compares both ways: repeated names, a name Node acts on.
const PROBE = ['Content-Length', '2', 'X-A', '1', 'X-A', '3', 'Cache-Control', 'no-cache'];

let fields: symbol | null | undefined = null;

/** The symbol of Node's field store, if handing a store over writes what writeHead(list) writes. */
function fieldSymbol(): symbol | undefined {
  if (fields === null) fields = publicApiOnly.has('field-store') ? undefined : findFieldSymbol();
  return fields;
}

function findFieldSymbol(): symbol | undefined {
  try {
    const probe = scratchResponse();
    const symbol = Object.getOwnPropertySymbols(probe).find((s) => s.description === 'kOutHeaders');
    if (symbol === undefined) return undefined;
    const store = storeOf(symbol, PROBE);
    if (store === undefined) return undefined;
    writeFromStore(probe, symbol, 200, store);
    const listed = scratchResponse();
    listed.writeHead(200, PROBE);
    const head = (res: ServerResponse) => (res as unknown as { _header?: unknown })._header;
    const [a, b] = [head(probe), head(listed)];
    return typeof a === 'string' && typeof b === 'string' && withoutDate(a) === withoutDate(b)
      ? symbol
      : undefined;
  } catch {
    // A Node whose responses cannot be made or written this way: every head takes writeHead(list).
    return undefined;
  }
}

const withoutDate = (head: string) => head.replace(/\r\nDate: [^\r]*/, '');

/** A response to nobody, for setHeader to fill and the self-tests to write. */
function scratchResponse(): ServerResponse {
  const request = new IncomingMessage(null as never);
  request.method = 'GET';
  request.httpVersionMajor = request.httpVersionMinor = 1;
  return new ServerResponse(request);
}

/**
 * `[name, value, …]` as a field store, each field checked by Node's setHeader; undefined when the
 * store is not used on this Node, a field is invalid (writeHead(list) then throws Node's own error
 * for it), or the list is one a store cannot write as writeHead(list) does.
 */
export function fieldStore(list: readonly string[]): FieldStore | undefined {
  const symbol = fieldSymbol();
  if (symbol === undefined) return undefined;
  try {
    return storeOf(symbol, list);
  } catch {
    return undefined;
  }
}

function storeOf(symbol: symbol, list: readonly string[]): FieldStore | undefined {
  const scratch = scratchResponse();
  for (let i = 0; i < list.length;) {
    const name = list[i]!;
    const values = [list[i + 1]!];
    // A store holds a name once: its lines go out together, under the first one's spelling.
    for (i += 2; i < list.length && list[i] === name; i += 2) values.push(list[i + 1]!);
    const lower = name.toLowerCase();
    // The same name again after others, or spelt otherwise: writeHead(list) keeps that order and
    // spelling, a store cannot. Node joins repeated Cookie values, and rewrites a repeated
    // Content-Disposition's values in place (the store is shared by every response).
    if (scratch.hasHeader(name)) return undefined;
    if (values.length > 1 && (lower === 'cookie' || lower === 'content-disposition'))
      return undefined;
    scratch.setHeader(name, values.length === 1 ? values[0]! : values);
  }
  const filled = (scratch as unknown as Record<symbol, FieldStore | null>)[symbol] ?? {};
  // Copied into an object made with a prototype and given none after: V8 keeps such an object in
  // fast mode, and Node's for…in over it then takes the enumeration cache (setHeader's own store,
  // made without a prototype, is a dictionary, slower to go through on every response).
  const store = {} as FieldStore;
  for (const key in filled) {
    // A valid field name, which as a key here would set the prototype rather than a field.
    if (key === '__proto__') return undefined;
    store[key] = filled[key]!;
  }
  return Object.setPrototypeOf(store, null) as FieldStore;
}

/**
 * Writes a head from a store `fieldStore` made: the fields as though set one by one, then what Node
 * adds to any head (Date, Connection, Keep-Alive, framing). Node does not write to the store (once
 * the head is out, setHeader and removeHeader refuse), so one store serves every response.
 */
export function writeStoredHead(res: HeadWriter, status: number, store: FieldStore): void {
  writeFromStore(res, fieldSymbol()!, status, store);
}

function writeFromStore(res: HeadWriter, symbol: symbol, status: number, store: FieldStore): void {
  (res as unknown as Record<symbol, FieldStore>)[symbol] = store;
  res.writeHead(status);
}

// ── The context a TLS connection starts with ───────────────────────────────────────────────────
// A tls.Server starts each connection with its default context (`_sharedCreds`, what
// setSecureContext made last). Setting it just for the connection being handed over starts that
// connection with the certificate its ClientHello names (certificate-contexts.ts says why
// SNICallback cannot). The public way, setSecureContext before the hand-over, makes a new context
// (parsing the key and certificate) for every connection whose name differs from the last one's.

type WithContext = TlsServer & { _sharedCreds: SecureContext };

let contextSwap: boolean | undefined;

/**
 * Whether a server's default context can be read and set for one hand-over on this Node. `tls` is
 * node:tls, which the caller has loaded (a server without HTTPS never does).
 */
export function contextSwapWorks(tls: typeof import('node:tls')): boolean {
  contextSwap ??= !publicApiOnly.has('context-swap') && tryContextSwap(tls);
  return contextSwap;
}

function tryContextSwap(tls: typeof import('node:tls')): boolean {
  try {
    const server = tls.createServer() as WithContext;
    const before = server._sharedCreds;
    server.setSecureContext({});
    const made = server._sharedCreds;
    const SecureContextClass = tls.createSecureContext().constructor;
    if (!(made instanceof SecureContextClass) || made === before) return false;
    // A connection handed over must take its context from there, when it is handed over.
    let read = false;
    Object.defineProperty(server, '_sharedCreds', {
      configurable: true,
      get: () => ((read = true), made),
    });
    const socket = new Duplex({
      read: () => undefined,
      write: (_chunk, _encoding, done) => done(),
    });
    server.emit('connection', socket);
    socket.destroy();
    return read;
  } catch {
    return false;
  }
}

/** The context the server starts connections with: the one its last setSecureContext made. */
export function defaultContext(server: TlsServer): SecureContext {
  return (server as WithContext)._sharedCreds;
}

/**
 * A context made by the server itself, so that it carries the server's session id context and
 * ticket keys, its default left as it was.
 */
export function serverMadeContext(server: TlsServer, options: SecureContextOptions): SecureContext {
  const target = server as WithContext;
  const usual = target._sharedCreds;
  target.setSecureContext(options);
  const made = target._sharedCreds;
  target._sharedCreds = usual;
  return made;
}

/** Hands the connection to the server to start its TLS from `context`; the default stays. */
export function handOverWith(server: TlsServer, socket: Duplex, context: SecureContext): void {
  const target = server as WithContext;
  const usual = target._sharedCreds;
  target._sharedCreds = context;
  try {
    target.emit('connection', socket);
  } finally {
    target._sharedCreds = usual;
  }
}

// ── Forcing the public API ─────────────────────────────────────────────────────────────────────

export type PrivateUse = 'field-store' | 'context-swap';

const publicApiOnly = new Set<PrivateUse>();

/**
 * From now on `use` takes the public API, as it does when its self-test fails: tests prove that
 * path gives the same results. Applies to what is made after the call.
 */
export function usePublicApi(use: PrivateUse): void {
  publicApiOnly.add(use);
  if (use === 'field-store') fields = undefined;
  else contextSwap = false;
}

/** The self-tests again, from scratch (after usePublicApi in tests). */
export function usePrivateApis(): void {
  publicApiOnly.clear();
  fields = null;
  contextSwap = undefined;
}
