// The compressors of dynamic responses: speed before the last percent of size, memory per stream
// bounded, and what came so far flushed out whenever the writer pauses, so a streamed response
// reaches the client as the backend sends it instead of when the compressor's buffer fills.
import type { Transform } from 'node:stream';
import zlib from 'node:zlib';
import type { Encoding } from './encoding-negotiation.js';
import type { BodyCoding } from './response-coder.js';
import { ZSTD } from './zstd.js';

// Where more effort stops paying on web pages (measured with callgrind; the figures are in the
// commit that chose them): brotli 3, and gzip 1, nginx's default.
const BROTLI_QUALITY = 3;
const GZIP_LEVEL = 1;
const ZSTD_LEVEL = 3;
// Windows: brotli's ring buffer and zstd's window grow to the window's size on a long body (4 MiB
// and 2 MiB by default); 256 KiB loses nothing on pages and bounds a stream's memory.
const BROTLI_WINDOW_BITS = 18;
const ZSTD_WINDOW_LOG = 18;
// zlib's own default for deflate: 128 KiB of window and 128 KiB of hash per stream, narrowed below
// for a body of known, smaller length (deflateWindow).
const DEFLATE_WINDOW_BITS = 15;
const DEFLATE_MEM_LEVEL = 8;

type Flushable = Transform & { flush(kind: number): void };

/**
 * nginx's rule: a body shorter than half the window needs no more than it, and the hash table
 * shrinks with it, so a small response costs kilobytes of state rather than 256 KiB.
 */
export function deflateWindow(length: number | undefined): {
  windowBits: number;
  memLevel: number;
} {
  let windowBits = DEFLATE_WINDOW_BITS;
  let memLevel = DEFLATE_MEM_LEVEL;
  if (length !== undefined)
    while (windowBits > 9 && length < (1 << (windowBits - 1)) - 262) {
      windowBits--;
      memLevel--;
    }
  return { windowBits, memLevel: Math.max(1, memLevel) };
}

function compressor(
  encoding: Encoding,
  length: number | undefined,
  exact: boolean,
): [Flushable, number] {
  switch (encoding) {
    case 'br':
      return [
        zlib.createBrotliCompress({
          params: {
            [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
            [zlib.constants.BROTLI_PARAM_LGWIN]: BROTLI_WINDOW_BITS,
            ...(length === undefined ? {} : { [zlib.constants.BROTLI_PARAM_SIZE_HINT]: length }),
          },
        }),
        zlib.constants.BROTLI_OPERATION_FLUSH,
      ];
    case 'zstd': {
      if (ZSTD === undefined) throw new Error('zstd was negotiated on a Node without it');
      const params = { [ZSTD.levelKey]: ZSTD_LEVEL, [ZSTD.windowLogKey]: ZSTD_WINDOW_LOG };
      // zstd fails a stream that breaks the length it was promised: only an exact one is.
      const options =
        length === undefined || !exact ? { params } : { params, pledgedSrcSize: length };
      return [ZSTD.createZstdCompress(options) as Flushable, ZSTD.flushKind];
    }
    case 'gzip':
      return [
        zlib.createGzip({ level: GZIP_LEVEL, ...deflateWindow(length) }),
        zlib.constants.Z_SYNC_FLUSH,
      ];
    case 'deflate':
      return [
        zlib.createDeflate({ level: GZIP_LEVEL, ...deflateWindow(length) }),
        zlib.constants.Z_SYNC_FLUSH,
      ];
  }
}

/**
 * A body's coding. The writer's pause is its next event-loop turn without a write: the pieces a
 * backend sent together (all read in one poll of the loop) are coded together, then flushed (a
 * sync flush: the dictionary is kept, so a flush costs a few bytes, not the ratio).
 */
class FlushingCoding implements BodyCoding {
  private scheduled = false;

  constructor(
    readonly stream: Flushable,
    private readonly kind: number,
  ) {}

  wrote(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.flush);
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    if (!this.stream.destroyed && !this.stream.writableEnded) this.stream.flush(this.kind);
  };
}

/**
 * A coding of a dynamic response's body; `length` when it is known: `exact` when the body is in
 * memory, a hint (a gateway's Content-Length, which nothing checks) otherwise.
 */
export function bodyCoding(
  encoding: Encoding,
  length: number | undefined,
  exact = false,
): BodyCoding {
  const [stream, kind] = compressor(encoding, length, exact);
  return new FlushingCoding(stream, kind);
}
