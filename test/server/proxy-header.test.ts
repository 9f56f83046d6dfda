// The PROXY header reader on its own: each version's forms, a header cut anywhere waits for more,
// what follows the header is not its own, and the bounds hold.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readProxyHeader } from '../../src/server/proxy-header.js';

const V2 = Buffer.from('0d0a0d0a000d0a515549540a', 'hex');

function v2(command: number, family: number, body: Buffer): Buffer {
  const head = Buffer.from([command, family, 0, 0]);
  head.writeUInt16BE(body.length, 2);
  return Buffer.concat([V2, head, body]);
}

describe('readProxyHeader', () => {
  it('reads v1 TCP4, TCP6 and UNKNOWN, and leaves what follows', () => {
    const v4 = Buffer.from('PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\nGET / HTTP/1.1\r\n');
    assert.deepEqual(readProxyHeader(v4), {
      kind: 'header',
      length: 45,
      client: { address: '192.0.2.1', port: 56324 },
    });
    const v6 = Buffer.from('PROXY TCP6 2001:db8::1 2001:db8::2 1 2\r\n');
    assert.deepEqual(readProxyHeader(v6), {
      kind: 'header',
      length: v6.length,
      client: { address: '2001:db8::1', port: 1 },
    });
    const unknown = Buffer.from('PROXY UNKNOWN whatever follows\r\n');
    assert.deepEqual(readProxyHeader(unknown), { kind: 'header', length: unknown.length });
  });

  it('reads v2 PROXY over IPv4 and IPv6 with TLVs, and LOCAL as the peer itself', () => {
    const tlv = Buffer.from([0x04, 0x00, 0x02, 0xaa, 0xbb]);
    const v4 = v2(
      0x21,
      0x11,
      Buffer.concat([Buffer.from([192, 0, 2, 1, 10, 0, 0, 1, 0xdc, 0x04, 0x01, 0xbb]), tlv]),
    );
    assert.deepEqual(readProxyHeader(Buffer.concat([v4, Buffer.from('rest')])), {
      kind: 'header',
      length: v4.length,
      client: { address: '192.0.2.1', port: 56324 },
    });
    const address = Buffer.alloc(36);
    address[0] = 0x20;
    address[1] = 0x01;
    address[15] = 1;
    address.writeUInt16BE(8080, 32);
    const v6 = v2(0x21, 0x21, address);
    assert.deepEqual(readProxyHeader(v6), {
      kind: 'header',
      length: v6.length,
      client: { address: '2001:0:0:0:0:0:0:1', port: 8080 },
    });
    const local = v2(0x20, 0x00, Buffer.alloc(0));
    assert.deepEqual(readProxyHeader(local), { kind: 'header', length: 16 });
  });

  it('waits for more at every cut of a header, and says none for other protocols', () => {
    const whole = v2(0x21, 0x11, Buffer.alloc(12));
    for (let n = 0; n < whole.length; n++)
      assert.deepEqual(readProxyHeader(whole.subarray(0, n)), { kind: 'more' }, `v2 cut at ${n}`);
    const line = Buffer.from('PROXY TCP4 192.0.2.1 198.51.100.2 1 2\r\n');
    for (let n = 0; n < line.length; n++)
      assert.deepEqual(readProxyHeader(line.subarray(0, n)), { kind: 'more' }, `v1 cut at ${n}`);
    for (const other of [
      'GET / HTTP/1.1\r\n',
      'POST /',
      'PRI * HTTP/2.0',
      '\x16\x03\x01',
      '\r\nGET',
    ])
      assert.deepEqual(readProxyHeader(Buffer.from(other, 'latin1')), { kind: 'none' }, other);
  });

  it('bounds v1 at 107 bytes', () => {
    const long = Buffer.from(`PROXY TCP4 ${'1'.repeat(96)}`);
    assert.equal(long.length, 107);
    assert.equal(readProxyHeader(long).kind, 'malformed');
    assert.equal(readProxyHeader(long.subarray(0, 106)).kind, 'more');
  });
});
