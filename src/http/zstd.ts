// zstd joined Node's zlib in 22.15 and 23.8; Node 20 (and @types/node 20) know nothing of it. What
// this Node has is read once at start-up, so every coding decision asks one answer.
import type { Transform } from 'node:stream';
import zlib from 'node:zlib';

type Params = Record<number, number>;

/** The part of Node's zstd API Portico uses, with the constants it needs. */
export interface ZstdApi {
  createZstdCompress(options: { params: Params; pledgedSrcSize?: number }): Transform;
  zstdCompress(
    buffer: Buffer,
    options: { params: Params },
    callback: (error: Error | null, result: Buffer) => void,
  ): void;
  /** ZSTD_c_compressionLevel, ZSTD_c_windowLog: parameter keys. */
  readonly levelKey: number;
  readonly windowLogKey: number;
  /** ZSTD_e_flush: what flush() asks for to emit what was written so far. */
  readonly flushKind: number;
}

interface ZlibLike {
  readonly createZstdCompress?: unknown;
  readonly zstdCompress?: unknown;
  readonly constants?: Readonly<Record<string, number>>;
}

/** `z`'s zstd, or undefined when that zlib has none (Node before 22.15). */
export function zstdOf(z: ZlibLike): ZstdApi | undefined {
  const c = z.constants ?? {};
  const levelKey = c.ZSTD_c_compressionLevel;
  const windowLogKey = c.ZSTD_c_windowLog;
  const flushKind = c.ZSTD_e_flush;
  if (
    typeof z.createZstdCompress !== 'function' ||
    typeof z.zstdCompress !== 'function' ||
    levelKey === undefined ||
    windowLogKey === undefined ||
    flushKind === undefined
  )
    return undefined;
  return {
    createZstdCompress: z.createZstdCompress.bind(z) as ZstdApi['createZstdCompress'],
    zstdCompress: z.zstdCompress.bind(z) as ZstdApi['zstdCompress'],
    levelKey,
    windowLogKey,
    flushKind,
  };
}

/** This Node's zstd, if it has one. */
export const ZSTD: ZstdApi | undefined = zstdOf(zlib as ZlibLike);
