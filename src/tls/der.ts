// A minimal DER reader and writer: only the types OCSP and certificate parsing need. The reader
// never reads past its buffer; anything malformed throws a DerError saying what and where. It
// parses one level at a time (no recursion), so deeply nested input cannot exhaust the stack.

export const Tag = {
  BOOLEAN: 0x01,
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  NULL: 0x05,
  OID: 0x06,
  ENUMERATED: 0x0a,
  GENERALIZED_TIME: 0x18,
  SEQUENCE: 0x30,
} as const;

const CONSTRUCTED = 0x20;

/** The tag octet of context-specific `[number]`: constructed for EXPLICIT or a constructed type. */
export function contextTag(number: number, constructed: boolean): number {
  if (!Number.isInteger(number) || number < 0 || number > 30)
    throw new RangeError(`context tag [${number}] is out of range`);
  return 0x80 | (constructed ? CONSTRUCTED : 0) | number;
}

export class DerError extends Error {
  override name = 'DerError';
}

export interface DerElement {
  /** The identifier octet (class, constructed bit and tag number). */
  readonly tag: number;
  /** The contents octets, a view into the parsed buffer. */
  readonly content: Buffer;
  /** The whole encoding (identifier, length and contents), a view into the parsed buffer. */
  readonly encoded: Buffer;
}

function describeTag(tag: number): string {
  const name = Object.entries(Tag).find(([, value]) => value === tag)?.[0];
  if (name) return name.replace('_', ' ');
  if ((tag & 0xc0) === 0x80) return `[${tag & 0x1f}]${tag & CONSTRUCTED ? '' : ' primitive'}`;
  return `tag 0x${tag.toString(16).padStart(2, '0')}`;
}

/** The element starting at `offset` and the offset just past it. */
function readAt(buf: Buffer, offset: number): { element: DerElement; end: number } {
  const byte = (at: number): number => {
    const value = buf[at];
    if (value === undefined)
      throw new DerError(`truncated: the element at offset ${offset} ends early`);
    return value;
  };
  const tag = byte(offset);
  if ((tag & 0x1f) === 0x1f)
    throw new DerError(`high tag numbers are not supported (offset ${offset})`);
  const first = byte(offset + 1);
  let length = first;
  let start = offset + 2;
  if (first === 0x80) throw new DerError(`indefinite length is not DER (offset ${offset})`);
  if (first > 0x80) {
    // Long form. Non-minimal length octets are BER, not DER, but harmless to read; four octets
    // already allow far more than any buffer this reader is given.
    const octets = first & 0x7f;
    if (octets > 4) throw new DerError(`length of ${octets} octets is too long (offset ${offset})`);
    length = 0;
    for (let i = 0; i < octets; i++) length = length * 256 + byte(start + i);
    start += octets;
  }
  const end = start + length;
  if (end > buf.length) {
    throw new DerError(
      `truncated: ${describeTag(tag)} at offset ${offset} needs ${length} bytes, ${Math.max(buf.length - start, 0)} left`,
    );
  }
  return {
    element: { tag, content: buf.subarray(start, end), encoded: buf.subarray(offset, end) },
    end,
  };
}

/** The elements that fill `buf` exactly, in order. */
export function readElements(buf: Buffer): DerElement[] {
  const elements: DerElement[] = [];
  for (let offset = 0; offset < buf.length;) {
    const { element, end } = readAt(buf, offset);
    elements.push(element);
    offset = end;
  }
  return elements;
}

/** The single element that `buf` holds; trailing bytes are an error. */
export function decode(buf: Buffer, what = 'DER value'): DerElement {
  const { element, end } = readAt(buf, 0);
  if (end !== buf.length) throw new DerError(`${what}: ${buf.length - end} bytes of trailing data`);
  return element;
}

/** `element`, which must be present and have tag `tag`. */
export function expectTag(element: DerElement | undefined, tag: number, what: string): DerElement {
  if (!element) throw new DerError(`${what}: missing, expected ${describeTag(tag)}`);
  if (element.tag !== tag)
    throw new DerError(`${what}: expected ${describeTag(tag)}, found ${describeTag(element.tag)}`);
  return element;
}

/** The elements inside a constructed element (a SEQUENCE, an EXPLICIT tag). */
export function children(element: DerElement, what: string): DerElement[] {
  if (!(element.tag & CONSTRUCTED))
    throw new DerError(`${what}: ${describeTag(element.tag)} is not constructed`);
  return readElements(element.content);
}

/** The one element inside an EXPLICIT tag. */
export function explicit(element: DerElement, what: string): DerElement {
  const inner = children(element, what);
  if (inner.length !== 1 || !inner[0])
    throw new DerError(`${what}: an explicit tag must hold one element, found ${inner.length}`);
  return inner[0];
}

/** A small INTEGER or ENUMERATED (at most 6 octets, as JavaScript numbers are exact up to 2^53). */
export function readSmallInteger(element: DerElement, what: string): number {
  const { content } = element;
  if (content.length === 0 || content.length > 6)
    throw new DerError(`${what}: an integer of ${content.length} octets is not supported`);
  return content.readIntBE(0, content.length);
}

/** The bits of a BIT STRING; OCSP's (keys, signatures) are whole octets. */
export function readBitString(element: DerElement, what: string): Buffer {
  const unusedBits = element.content[0];
  if (unusedBits === undefined) throw new DerError(`${what}: empty BIT STRING`);
  if (unusedBits !== 0)
    throw new DerError(`${what}: BIT STRING with ${unusedBits} unused bits is not supported`);
  return element.content.subarray(1);
}

export function readNull(element: DerElement, what: string): null {
  if (element.content.length !== 0) throw new DerError(`${what}: NULL must be empty`);
  return null;
}

/** An OBJECT IDENTIFIER in dotted form, e.g. `1.3.6.1.5.5.7.48.1`. */
export function readOid(element: DerElement, what: string): string {
  const arcs: number[] = [];
  let value = 0;
  let pending = false;
  for (const octet of element.content) {
    if (!pending && octet === 0x80)
      throw new DerError(`${what}: OID subidentifier with a leading 0x80 octet`);
    if (value > (Number.MAX_SAFE_INTEGER - 0x7f) / 128)
      throw new DerError(`${what}: OID arc is too large`);
    value = value * 128 + (octet & 0x7f);
    pending = (octet & 0x80) !== 0;
    if (!pending) {
      arcs.push(value);
      value = 0;
    }
  }
  const first = arcs[0];
  if (first === undefined || pending) throw new DerError(`${what}: truncated or empty OID`);
  // The first subidentifier packs two arcs: 40 * first + second, where first is 0, 1 or 2.
  const top = first < 40 ? 0 : first < 80 ? 1 : 2;
  return [top, first - 40 * top, ...arcs.slice(1)].join('.');
}

const GENERALIZED_TIME = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:\.(\d{1,9}))?Z$/;

/** A GeneralizedTime in DER's form: UTC (`Z`), seconds present, optional fraction. */
export function readGeneralizedTime(element: DerElement, what: string): Date {
  const text = element.content.toString('latin1');
  const match = GENERALIZED_TIME.exec(text);
  if (!match) throw new DerError(`${what}: ${JSON.stringify(text)} is not a UTC GeneralizedTime`);
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

/** One element: `tag`, the length in DER's minimal form, then the contents. */
export function encode(tag: number, ...contents: Buffer[]): Buffer {
  const content = Buffer.concat(contents);
  const length = content.length;
  let header: Buffer;
  if (length < 0x80) {
    header = Buffer.from([tag, length]);
  } else {
    const octets: number[] = [];
    for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) octets.unshift(rest % 256);
    header = Buffer.from([tag, 0x80 | octets.length, ...octets]);
  }
  return Buffer.concat([header, content]);
}

export function encodeOid(oid: string): Buffer {
  const arcs = oid.split('.').map((arc) => (/^\d+$/.test(arc) ? Number(arc) : NaN));
  const [top, second, ...rest] = arcs;
  const valid =
    arcs.every(Number.isSafeInteger) &&
    top !== undefined &&
    second !== undefined &&
    top <= 2 &&
    (top === 2 || second < 40);
  if (!valid) throw new RangeError(`${JSON.stringify(oid)} is not an OID`);
  const octets: number[] = [];
  for (const arc of [top * 40 + second, ...rest]) {
    const group = [arc % 128];
    for (let value = Math.floor(arc / 128); value > 0; value = Math.floor(value / 128))
      group.unshift(0x80 | (value % 128));
    octets.push(...group);
  }
  return encode(Tag.OID, Buffer.from(octets));
}
