// The server name and ALPN protocols a TLS client asks for, read from its ClientHello before the
// handshake starts (RFC 8446 §4.1.2, RFC 6066 §3, RFC 7301), so that the connection begins with
// the right certificate's context. Node's SNICallback cannot do that: it adds the chosen certificate beside the default
// one, and OpenSSL then prefers an ECDSA default over an RSA certificate for the name.

/**
 * What the bytes so far say: wait for more, or the name (undefined: no SNI, or not TLS) and the
 * ALPN protocols offered (an ACME CA's TLS-ALPN-01 validation offers only `acme-tls/1`).
 */
export type HelloReading =
  | { readonly complete: false }
  | { readonly complete: true; readonly name?: string; readonly alpn?: readonly string[] };

const HANDSHAKE = 0x16;
const CLIENT_HELLO = 0x01;
const SERVER_NAME = 0x0000;
const ALPN = 0x0010;
const HOST_NAME = 0x00;
/** A ClientHello larger than one record (16 KiB) is not waited for: the default context serves it. */
export const MAX_HELLO_BYTES = 5 + 16_384;

const NOT_TLS = { complete: true } as const;
const MORE = { complete: false } as const;

export function readClientHello(data: Buffer): HelloReading {
  if (data.length === 0) return MORE;
  if (data[0] !== HANDSHAKE) return NOT_TLS;
  if (data.length < 5) return MORE;
  const recordLength = data.readUInt16BE(3);
  if (data.length < 5 + recordLength) return data.length >= MAX_HELLO_BYTES ? NOT_TLS : MORE;
  try {
    return { complete: true, ...nameIn(data.subarray(5, 5 + recordLength)) };
  } catch {
    // A malformed hello is OpenSSL's to refuse.
    return NOT_TLS;
  }
}

/** The host_name and ALPN list of a ClientHello (throws RangeError when it is cut short). */
function nameIn(hello: Buffer): { name?: string; alpn?: string[] } {
  if (hello[0] !== CLIENT_HELLO) return {};
  let at = 4 + 2 + 32; // handshake header, legacy_version, random
  at += 1 + hello[at]!; // legacy_session_id
  at += 2 + hello.readUInt16BE(at); // cipher_suites
  at += 1 + hello[at]!; // legacy_compression_methods
  if (at + 2 > hello.length) return {};
  const end = Math.min(hello.length, at + 2 + hello.readUInt16BE(at));
  at += 2;
  const found: { name?: string; alpn?: string[] } = {};
  while (at + 4 <= end) {
    const type = hello.readUInt16BE(at);
    const length = hello.readUInt16BE(at + 2);
    at += 4;
    if (type === SERVER_NAME) {
      // server_name_list: a length, then entries of type, length, name.
      let entry = at + 2;
      const listEnd = at + 2 + hello.readUInt16BE(at);
      while (entry + 3 <= listEnd) {
        const nameLength = hello.readUInt16BE(entry + 1);
        if (hello[entry] === HOST_NAME) {
          found.name = hello.toString('latin1', entry + 3, entry + 3 + nameLength);
          break;
        }
        entry += 3 + nameLength;
      }
    } else if (type === ALPN) {
      // protocol_name_list: a length, then names each prefixed by one length byte.
      const protocols: string[] = [];
      const listEnd = at + 2 + hello.readUInt16BE(at);
      for (let p = at + 2; p < listEnd; p += 1 + hello[p]!)
        protocols.push(hello.toString('latin1', p + 1, p + 1 + hello[p]!));
      found.alpn = protocols;
    }
    at += length;
  }
  return found;
}
