// Content-coding of static files: which files are worth compressing, and the compressors for a file
// streamed from disk and for a small file's cached variants. Which coding a request gets is
// src/http/encoding-negotiation.ts's answer, the same as for dynamic responses.
import { promisify } from 'node:util';
import { extname } from 'node:path';
import type { Transform } from 'node:stream';
import zlib from 'node:zlib';
import { isCompressibleType, mediaType } from '../http/compressible-types.js';
import type { Encoding } from '../http/encoding-negotiation.js';
import { ZSTD, type ZstdApi } from '../http/zstd.js';

/** Bodies of this size or less are sent as they are: the coding's framing would eat the gain (Ferron's rule too). */
export const MAX_UNCOMPRESSED_SIZE = 256;

// Ferron's list of already-compressed extensions (REFERENCE-behaviour.md §8), compared
// case-insensitively here.
const COMPRESSED_EXTENSIONS = new Set(
  (
    '7z air amlx apk apng appinstaller appx appxbundle arj au avif bdoc boz br bz bz2 caf class doc docx dot dvi ear ' +
    'epub flv gdoc gif gsheet gslides gz iges igs jar jnlp jp2 jpe jpeg jpf jpg jpg2 jpgm jpm jpx kmz latex m1v m2a ' +
    'm2v m3a m4a mesh mk3d mks mkv mov mp2 mp2a mp3 mp4 mp4a mp4v mpe mpeg mpg mpg4 mpga msg msh msix msixbundle odg ' +
    'odp ods odt oga ogg ogv ogx opus p12 pdf pfx pgp pkpass png pot pps ppt pptx qt ser silo sit snd spx stpxz stpz ' +
    'swf tif tiff ubj usdz vbox-extpack vrml war wav weba webm wmv wrl x3dbz x3dvz xla xlc xlm xls xlsx xlt xlw xpi ' +
    'svgz xps zip zst'
  ).split(' '),
);
/** Whether a file of this name and Content-Type is worth compressing (size aside). */
export function isCompressible(name: string, contentType: string | undefined): boolean {
  // Ferron's list still applies first: `.svgz` is image/svg+xml and already gzip.
  if (contentType === undefined || COMPRESSED_EXTENSIONS.has(extname(name).slice(1).toLowerCase()))
    return false;
  return isCompressibleType(mediaType(contentType));
}

/** A compressing stream for a body streamed from disk: brotli at quality 4 keeps up with the disk. */
export function compressingStream(encoding: Encoding, sizeHint: number): Transform {
  switch (encoding) {
    case 'br':
      return zlib.createBrotliCompress({
        params: {
          [zlib.constants.BROTLI_PARAM_QUALITY]: 4,
          [zlib.constants.BROTLI_PARAM_SIZE_HINT]: sizeHint,
        },
      });
    case 'zstd':
      return zstd().createZstdCompress({
        params: { [zstd().levelKey]: 3 },
        pledgedSrcSize: sizeHint,
      });
    case 'gzip':
      return zlib.createGzip();
    case 'deflate':
      return zlib.createDeflate();
  }
}

/** This Node's zstd: negotiation offers zstd only when there is one. */
function zstd(): ZstdApi {
  if (ZSTD === undefined) throw new Error('zstd was negotiated on a Node without it');
  return ZSTD;
}

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);
const deflate = promisify(zlib.deflate);

// A cached variant is compressed once and served many times, so it gets more effort. Measured on
// minified JavaScript: brotli 11 costs about 1 ms per KiB (60 ms for 64 KiB, 400 ms for 300 KiB)
// for 8–10 % smaller output than quality 6 (8 ms for 300 KiB). Quality 11 is used up to 32 KiB,
// where the first request waits at most some 30 ms; the work runs on libuv's pool, never on the
// event loop.
const MAX_BROTLI_11_SIZE = 32 * 1024;

/** Compresses a small file's whole body for the cache. */
export function compressBuffer(body: Buffer, encoding: Encoding): Promise<Buffer> {
  switch (encoding) {
    case 'br':
      return brotli(body, {
        params: {
          [zlib.constants.BROTLI_PARAM_QUALITY]: body.length <= MAX_BROTLI_11_SIZE ? 11 : 6,
          [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length,
        },
      });
    case 'zstd':
      // As brotli: the most effort where the first request waits little for it.
      return new Promise((resolve, reject) =>
        zstd().zstdCompress(
          body,
          { params: { [zstd().levelKey]: body.length <= MAX_BROTLI_11_SIZE ? 19 : 9 } },
          (error, result) => (error ? reject(error) : resolve(result)),
        ),
      );
    case 'gzip':
      return gzip(body, { level: 9 });
    case 'deflate':
      return deflate(body, { level: 9 });
  }
}
