// Configuration files are UTF-8: bytes that are not are refused with the position of the first bad
// one, rather than read as something else.
import type { Diagnostics } from './diagnostics.js';
import type { Pos } from './raw.js';

/**
 * File bytes → text. Node's own decoding would turn bytes that are not UTF-8 into U+FFFD without a
 * word, so a Latin-1 path would be served as something else; such a file is refused with the
 * position of the first bad byte. A UTF-8 byte order mark is dropped.
 */
export function decodeUtf8(
  bytes: Uint8Array,
  file: string,
  diags: Diagnostics,
): string | undefined {
  const bom = foreignByteOrderMark(bytes);
  if (bom) {
    diags.error(
      { file, line: 1, col: 1 },
      '',
      `the file is ${bom} (it starts with that byte order mark); save it as UTF-8`,
    );
    return undefined;
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    const offset = firstInvalidUtf8(bytes);
    diags.error(
      bytePosition(bytes, offset, file),
      '',
      `not valid UTF-8 (byte 0x${bytes[offset]!.toString(16).toUpperCase().padStart(2, '0')}); save the file as UTF-8`,
    );
    return undefined;
  }
  // Valid UTF-8, yet no configuration holds a NUL: this is UTF-16 or UTF-32 without a byte order mark.
  const nul = bytes.indexOf(0);
  if (nul >= 0) {
    diags.error(
      bytePosition(bytes, nul, file),
      '',
      'a NUL byte; is the file UTF-16 without a byte order mark? save it as UTF-8',
    );
    return undefined;
  }
  return text;
}

function foreignByteOrderMark(b: Uint8Array): string | undefined {
  const starts = (...mark: number[]) => mark.every((m, i) => b[i] === m);
  if (starts(0xff, 0xfe, 0, 0)) return 'UTF-32LE';
  if (starts(0, 0, 0xfe, 0xff)) return 'UTF-32BE';
  if (starts(0xff, 0xfe)) return 'UTF-16LE';
  if (starts(0xfe, 0xff)) return 'UTF-16BE';
  return undefined;
}

/** The offset of the first byte that does not start a well-formed UTF-8 sequence (RFC 3629). */
function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0;
  while (i < b.length) {
    const c = b[i]!;
    const extra =
      c < 0x80
        ? 0
        : c >= 0xc2 && c <= 0xdf
          ? 1
          : c >= 0xe0 && c <= 0xef
            ? 2
            : c >= 0xf0 && c <= 0xf4
              ? 3
              : -1;
    if (extra < 0) return i;
    // The second byte's range excludes overlong forms, surrogates and code points above U+10FFFF.
    const low = c === 0xe0 ? 0xa0 : c === 0xf0 ? 0x90 : 0x80;
    const high = c === 0xed ? 0x9f : c === 0xf4 ? 0x8f : 0xbf;
    for (let k = 1; k <= extra; k++) {
      const next = b[i + k];
      if (next === undefined || next < (k === 1 ? low : 0x80) || next > (k === 1 ? high : 0xbf))
        return i;
    }
    i += extra + 1;
  }
  return b.length;
}

/** Line and column (in characters) of a byte offset whose preceding bytes are valid UTF-8. */
function bytePosition(bytes: Uint8Array, offset: number, file: string): Pos {
  let line = 1;
  let lineStart = 0;
  for (let i = bytes.indexOf(0x0a); i >= 0 && i < offset; i = bytes.indexOf(0x0a, i + 1)) {
    line++;
    lineStart = i + 1;
  }
  const before = new TextDecoder('utf-8').decode(bytes.subarray(lineStart, offset));
  return { file, line, col: [...before].length + 1 };
}
