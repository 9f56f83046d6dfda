// The PROXY protocol header a load balancer puts before a connection's first byte (HAProxy's
// proxy-protocol.txt, versions 1 and 2): who the client is. Read strictly and within bounds, from
// the bytes received so far: v1 is one text line of at most 107 bytes; v2 a 16-byte head whose
// length field bounds the rest (at most 65,535 bytes more). The npm parsers (proxy-protocol-js,
// @balena/proxy-protocol-parser) take a whole buffer, check neither addresses nor ports, and do not
// say where a v2 header ends, so this one is Portico's.
import { isIP } from 'node:net';

export interface ProxiedClient {
  readonly address: string;
  readonly port: number;
}

export type ProxyReading =
  /** The bytes so far could still begin a header. */
  | { readonly kind: 'more' }
  /** Not a PROXY header: the connection speaks its protocol from its first byte. */
  | { readonly kind: 'none' }
  /**
   * A header of `length` bytes; `client` undefined when it names none (v1 UNKNOWN, v2 LOCAL or an
   * address family without one): the peer speaks for itself.
   */
  | { readonly kind: 'header'; readonly length: number; readonly client?: ProxiedClient }
  | { readonly kind: 'malformed'; readonly reason: string };

const V1 = Buffer.from('PROXY ', 'latin1');
const V2 = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);
const MAX_V1_BYTES = 107;
const V2_HEAD = 16;
const MORE = { kind: 'more' } as const;
const NONE = { kind: 'none' } as const;
const PORT = /^(?:0|[1-9]\d{0,4})$/;

/** Whether `data` begins with `prefix`, could still (it is shorter), or cannot. */
function startsAs(data: Buffer, prefix: Buffer): 'yes' | 'maybe' | 'no' {
  const n = Math.min(data.length, prefix.length);
  if (data.compare(prefix, 0, n, 0, n) !== 0) return 'no';
  return n === prefix.length ? 'yes' : 'maybe';
}

/** What the first bytes of a connection say of a PROXY header: the signature alone is looked at. */
export function proxySignature(data: Buffer): 'more' | 'none' | 'v1' | 'v2' {
  const v1 = startsAs(data, V1);
  const v2 = startsAs(data, V2);
  if (v1 === 'yes') return 'v1';
  if (v2 === 'yes') return 'v2';
  return v1 === 'maybe' || v2 === 'maybe' ? 'more' : 'none';
}

export function readProxyHeader(data: Buffer): ProxyReading {
  const signature = proxySignature(data);
  if (signature === 'more') return MORE;
  if (signature === 'none') return NONE;
  return signature === 'v1' ? readV1(data) : readV2(data);
}

function malformed(reason: string): ProxyReading {
  return { kind: 'malformed', reason };
}

function readV1(data: Buffer): ProxyReading {
  const end = data.subarray(0, MAX_V1_BYTES).indexOf('\r\n');
  if (end < 0)
    return data.length >= MAX_V1_BYTES
      ? malformed(`a v1 header longer than ${MAX_V1_BYTES} bytes`)
      : MORE;
  const length = end + 2;
  const line = data.toString('latin1', V1.length, end);
  const fields = line.split(' ');
  if (fields[0] === 'UNKNOWN') return { kind: 'header', length };
  if (fields.length !== 5) return malformed('a v1 header without its five fields');
  const [family, source, , sourcePort, destinationPort] = fields as [string, ...string[]];
  const version = family === 'TCP4' ? 4 : family === 'TCP6' ? 6 : 0;
  if (version === 0) return malformed('a v1 header of an unknown protocol');
  if (isIP(source!) !== version || isIP(fields[2]!) !== version)
    return malformed('a v1 header whose addresses are not of its protocol');
  for (const port of [sourcePort!, destinationPort!])
    if (!PORT.test(port) || Number(port) > 65535) return malformed('a v1 header with a bad port');
  return { kind: 'header', length, client: { address: source!, port: Number(sourcePort) } };
}

// v2's fourth-to-last head byte: version in the high nibble, command in the low.
const LOCAL = 0x20;
const PROXY = 0x21;
const INET = 0x1;
const INET6 = 0x2;
const STREAM = 0x1;

function readV2(data: Buffer): ProxyReading {
  if (data.length < V2_HEAD) return MORE;
  const command = data[12]!;
  if (command !== LOCAL && command !== PROXY)
    return malformed('a v2 header of an unknown version or command');
  const length = V2_HEAD + data.readUInt16BE(14);
  if (data.length < length) return MORE;
  if (command === LOCAL) return { kind: 'header', length };
  const family = data[13]! >> 4;
  const transport = data[13]! & 0xf;
  if (family !== INET && family !== INET6) return { kind: 'header', length };
  if (transport !== STREAM) return malformed('a v2 header of a connection that is not TCP');
  const size = family === INET ? 4 : 16;
  // Two addresses, then two ports; what follows (TLVs) is skipped.
  if (length < V2_HEAD + 2 * size + 4) return malformed('a v2 header too short for its addresses');
  const source = data.subarray(V2_HEAD, V2_HEAD + size);
  const port = data.readUInt16BE(V2_HEAD + 2 * size);
  return { kind: 'header', length, client: { address: addressOf(source), port } };
}

function addressOf(bytes: Buffer): string {
  if (bytes.length === 4) return bytes.join('.');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(bytes.readUInt16BE(i).toString(16));
  return groups.join(':');
}
