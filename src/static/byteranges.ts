// A `multipart/byteranges` body (RFC 9110 §14.6): each range behind a boundary line and its own
// Content-Type and Content-Range, then a closing delimiter. The length is known in advance, so
// the response carries Content-Length either way.
import { randomBytes } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { ByteRange } from './ranges.js';

export interface Multipart {
  readonly contentType: string;
  readonly length: number;
  /** The part headers, one per range, in order. */
  readonly heads: readonly Buffer[];
  readonly tail: Buffer;
}

export function multipart(
  ranges: readonly ByteRange[],
  size: number,
  partType: string | undefined,
): Multipart {
  const boundary = randomBytes(16).toString('hex');
  const typeLine = partType === undefined ? '' : `Content-Type: ${partType}\r\n`;
  const heads = ranges.map((r) =>
    Buffer.from(
      `\r\n--${boundary}\r\n${typeLine}Content-Range: bytes ${r.start}-${r.end}/${size}\r\n\r\n`,
    ),
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  let length = tail.length;
  for (let i = 0; i < ranges.length; i++)
    length += heads[i]!.length + ranges[i]!.end - ranges[i]!.start + 1;
  return { contentType: `multipart/byteranges; boundary=${boundary}`, length, heads, tail };
}

/** The body from a file held in memory. */
export function multipartBuffer(
  parts: Multipart,
  ranges: readonly ByteRange[],
  body: Buffer,
): Buffer {
  const chunks: Buffer[] = [];
  for (let i = 0; i < ranges.length; i++)
    chunks.push(parts.heads[i]!, body.subarray(ranges[i]!.start, ranges[i]!.end + 1));
  chunks.push(parts.tail);
  return Buffer.concat(chunks, parts.length);
}

const CHUNK = 64 * 1024;

async function* multipartChunks(
  parts: Multipart,
  ranges: readonly ByteRange[],
  handle: FileHandle,
): AsyncGenerator<Buffer> {
  for (let i = 0; i < ranges.length; i++) {
    yield parts.heads[i]!;
    const { start, end } = ranges[i]!;
    for (let position = start; position <= end;) {
      // A fresh buffer per chunk: the stream keeps it until the socket has written it.
      const chunk = Buffer.allocUnsafe(Math.min(CHUNK, end - position + 1));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, position);
      if (bytesRead === 0) throw new Error('the file shrank while its ranges were being sent');
      position += bytesRead;
      yield chunk.subarray(0, bytesRead);
    }
  }
  yield parts.tail;
}

/** The body streamed from an open file; the handle is closed when the stream ends or is destroyed. */
export function multipartStream(
  parts: Multipart,
  ranges: readonly ByteRange[],
  handle: FileHandle,
): Readable {
  const body = Readable.from(multipartChunks(parts, ranges, handle), { objectMode: false });
  // On 'close', not in the generator's `finally`: a stream destroyed before its first read never
  // runs the generator, so its `finally` would not run either. close() waits for a read under way.
  body.once('close', () => void handle.close().catch(() => {}));
  return body;
}
