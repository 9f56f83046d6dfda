import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  acceptKey,
  encodeFrame,
  MAX_MESSAGE,
  Opcode,
  WebSocketReader,
} from '../../src/gateway/websocket-frames.js';

/** A client frame: masked, as RFC 6455 §5.3 requires. */
function clientFrame(opcode: number, payload: Buffer, fin = true, masked = true): Buffer {
  const mask = Buffer.from([0x11, 0x22, 0x33, 0x44]);
  const length = payload.length;
  const head =
    length < 126
      ? Buffer.from([(fin ? 0x80 : 0) | opcode, (masked ? 0x80 : 0) | length])
      : Buffer.from([
          (fin ? 0x80 : 0) | opcode,
          (masked ? 0x80 : 0) | 126,
          length >> 8,
          length & 255,
        ]);
  const body = masked ? payload.map((b, i) => b ^ mask[i % 4]!) : payload;
  return Buffer.concat([head, masked ? mask : Buffer.alloc(0), body]);
}

function read(...chunks: Buffer[]) {
  const events: unknown[] = [];
  const reader = new WebSocketReader({
    message: (binary, data) => events.push(['message', binary, data.toString()]),
    ping: (data) => events.push(['ping', data.toString()]),
    close: (code, reason) => events.push(['close', code, reason]),
  });
  for (const chunk of chunks) reader.push(chunk);
  return events;
}

describe('WebSocket framing', () => {
  it('computes the handshake key of RFC 6455 §1.3', () => {
    assert.equal(acceptKey('dGhlIHNhbXBsZSBub25jZQ=='), 's3pPLMBiTxaQ9kYGzzhZRbK+xOo=');
  });

  it('reads masked text, binary, fragmented and 16-bit-length messages, cut anywhere', () => {
    const long = Buffer.alloc(300, 'a');
    const bytes = Buffer.concat([
      clientFrame(Opcode.Text, Buffer.from('héllo')),
      clientFrame(Opcode.Binary, Buffer.from('bin')),
      clientFrame(Opcode.Text, Buffer.from('frag'), false),
      clientFrame(Opcode.Ping, Buffer.from('p')),
      clientFrame(Opcode.Continuation, Buffer.from('mented')),
      clientFrame(Opcode.Text, long),
    ]);
    const expected = [
      ['message', false, 'héllo'],
      ['message', true, 'bin'],
      ['ping', 'p'],
      ['message', false, 'fragmented'],
      ['message', false, long.toString()],
    ];
    assert.deepEqual(read(bytes), expected);
    assert.deepEqual(read(...[...bytes].map((b) => Buffer.from([b]))), expected);
  });

  it('closes on what breaks the protocol: unmasked frames, bad UTF-8, oversized messages, bad close codes', () => {
    assert.deepEqual(read(clientFrame(Opcode.Text, Buffer.from('x'), true, false)), [
      ['close', 1002, 'client frames must be masked'],
    ]);
    assert.deepEqual(read(clientFrame(Opcode.Text, Buffer.from([0xff, 0xfe]))), [
      ['close', 1007, 'text is not UTF-8'],
    ]);
    const huge = Buffer.from([0x82, 0x80 | 127, 0, 0, 0, 0, 0x7f, 0, 0, 0]);
    assert.deepEqual(read(huge), [['close', 1009, 'message too big']]);
    assert.ok(MAX_MESSAGE < 0x7f000000);
    const close = (code: number) => {
      const payload = Buffer.alloc(2);
      payload.writeUInt16BE(code);
      return clientFrame(Opcode.Close, payload);
    };
    assert.deepEqual(read(close(1000)), [['close', 1000, '']]);
    assert.deepEqual(read(close(1005)), [['close', 1002, 'bad close frame']]);
    assert.deepEqual(read(clientFrame(Opcode.Close, Buffer.alloc(0))), [['close', 1005, '']]);
    assert.deepEqual(read(clientFrame(Opcode.Continuation, Buffer.from('x'))), [
      ['close', 1002, 'a continuation of nothing'],
    ]);
  });

  it('writes unmasked frames with the three length forms', () => {
    assert.deepEqual([...encodeFrame(Opcode.Text, Buffer.from('hi'))], [0x81, 2, 104, 105]);
    const mid = encodeFrame(Opcode.Binary, Buffer.alloc(1000));
    assert.deepEqual([...mid.subarray(0, 4)], [0x82, 126, 0x03, 0xe8]);
    const long = encodeFrame(Opcode.Binary, Buffer.alloc(70000));
    assert.equal(long[1], 127);
    assert.equal(long.readBigUInt64BE(2), 70000n);
  });
});
