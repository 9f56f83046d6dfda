import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { creditFrame, Frame, frame, FrameReader, MAX_FRAME } from '../../src/python/frames.js';

function readAll(chunks: Buffer[]): [Frame, number, string][] {
  const seen: [Frame, number, string][] = [];
  const reader = new FrameReader((type, stream, payload) =>
    seen.push([type, stream, payload.toString()]),
  );
  for (const chunk of chunks) reader.push(chunk);
  return seen;
}

describe('bridge frames', () => {
  it('reads frames cut anywhere, one byte at a time included', () => {
    const bytes = Buffer.concat([
      frame(Frame.Request, 1, '{"a":1}'),
      frame(Frame.Body, 1, 'hello'),
      frame(Frame.End, 1),
      creditFrame(7, 65536),
    ]);
    const whole = readAll([bytes]);
    const bytewise = readAll([...bytes].map((b) => Buffer.from([b])));
    assert.deepEqual(bytewise, whole);
    assert.deepEqual(whole.slice(0, 3), [
      [Frame.Request, 1, '{"a":1}'],
      [Frame.Body, 1, 'hello'],
      [Frame.End, 1, ''],
    ]);
    assert.equal(whole[3]![1], 7);
  });

  it('refuses a frame larger than its bound instead of buffering it', () => {
    const head = Buffer.alloc(9);
    head[0] = Frame.Body;
    head.writeUInt32BE(1, 1);
    head.writeUInt32BE(MAX_FRAME + 1, 5);
    assert.throws(() => readAll([head]), /a frame of \d+ bytes/);
  });
});
