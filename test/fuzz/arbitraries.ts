// Generators the fuzz targets share: weighted choice, HTTP tokens, and bytes that parsers trip on.
import fc from 'fast-check';

/** One of the arbitraries, each chosen in proportion to its weight. */
export const weighted = <T>(...pairs: [number, fc.Arbitrary<T>][]): fc.Arbitrary<T> =>
  fc.oneof(...pairs.map(([weight, arbitrary]) => ({ weight, arbitrary })));

const TCHARS = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/** An RFC 9110 token (a method, a field name, an extension name). */
export const token = (maxLength = 16): fc.Arbitrary<string> =>
  fc.string({ unit: fc.constantFrom(...TCHARS), minLength: 1, maxLength });

/** Any byte as a latin1 character, weighted towards the ones parsers trip on. */
const anyByte = weighted(
  [4, fc.constantFrom(...'aZ09-_.~/?#%:;,="\\ '.split(''))],
  [2, fc.constantFrom('\0', '\t', '\r', '\n', '\x0b', '\x1f', '\x7f', '\x80', '\xff', '\xc0')],
  [1, fc.integer({ min: 0, max: 255 }).map((b) => String.fromCharCode(b))],
);

/** A short run of any bytes. */
export const junk = (maxLength = 24): fc.Arbitrary<string> =>
  fc.string({ unit: anyByte, maxLength });
