// What the @peculiar/asn1-schema parser leaves to its caller when the input must be DER: it reads
// BER (indefinite lengths; times in local time or with an offset, which asn1js misreads) and
// stops after the first element. Also the encodings of a SEQUENCE's elements as they were, for
// what is hashed or compared byte for byte. Anything malformed throws a DerError saying what.

import { AsnArray, AsnConvert, AsnPropTypes, AsnSequenceType } from '@peculiar/asn1-schema';

export class DerError extends Error {
  override name = 'DerError';
}

/** `der`, which must hold one element and nothing after it, read as `type`. */
export function decode<T>(der: Uint8Array, type: new () => T, what: string): T {
  let value: T;
  try {
    value = AsnConvert.parse(der, type);
  } catch (err) {
    throw new DerError(`${what}: ${err instanceof Error ? err.message : String(err)}`);
  }
  // The parser has checked the header: one tag octet, then the length octets.
  const first = der[1] ?? 0;
  if (first === 0x80) throw new DerError(`${what}: indefinite length is not DER`);
  let end = 2 + first;
  if (first > 0x80) {
    const octets = first & 0x7f;
    end = 2 + octets;
    for (let i = 0; i < octets; i++) end += (der[2 + i] ?? 0) * 256 ** (octets - 1 - i);
  }
  if (end !== der.length) throw new DerError(`${what}: ${der.length - end} bytes of trailing data`);
  return value;
}

class RawElements extends AsnArray<ArrayBuffer> {}
AsnSequenceType({ itemType: AsnPropTypes.Any })(RawElements);

/** The encodings of the elements of the SEQUENCE (or constructed [n]) `der`, in order. */
export function elements(der: ArrayBuffer | Uint8Array | undefined, what: string): Uint8Array[] {
  const bytes = der instanceof Uint8Array ? der : new Uint8Array(der ?? new ArrayBuffer(0));
  return Array.from(decode(bytes, RawElements, what), (element) => new Uint8Array(element));
}

const GENERALIZED_TIME = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:\.(\d{1,9}))?Z$/;

/** The GeneralizedTime `encoded`, in DER's form: UTC (`Z`), seconds, an optional fraction. */
export function readGeneralizedTime(encoded: Uint8Array | undefined, what: string): Date {
  // A valid time has 15 to 25 characters, so a one-octet length: the text starts at offset 2.
  const text = Buffer.from(encoded?.subarray(2) ?? []).toString('latin1');
  const match = GENERALIZED_TIME.exec(text);
  if (encoded?.[0] !== 0x18 || !match)
    throw new DerError(`${what}: ${JSON.stringify(text)} is not a UTC GeneralizedTime`);
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const milliseconds = Number((match[7] ?? '').padEnd(3, '0').slice(0, 3));
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second, milliseconds));
  // Date.UTC rolls over (month 13, 31 February); a valid time survives the round trip.
  const valid =
    date.getUTCFullYear() === year &&
    date.getUTCMonth() === month - 1 &&
    date.getUTCDate() === day &&
    date.getUTCHours() === hour &&
    date.getUTCMinutes() === minute &&
    date.getUTCSeconds() === second;
  if (!valid) throw new DerError(`${what}: ${JSON.stringify(text)} is not a valid time`);
  return date;
}
