// Password hashes in Ferron's format: PHC strings as written and read by the Rust `password-auth`
// crate (RustCrypto `argon2`, `pbkdf2`, `scrypt` over `password-hash`). Argon2 goes through
// @node-rs/argon2, which wraps that same RustCrypto `argon2` crate; scrypt and PBKDF2 are
// re-implemented here on Node's crypto, following `password-hash` 0.5 (what password-auth 1.0
// uses): the KDF gets the B64-*decoded* salt bytes (`salt.decode_b64` in pbkdf2 0.12 and
// scrypt 0.11 `src/simple.rs`; password-hash 0.6 keeps the salt decoded outright), and the
// output length is the decoded hash's.
import type { Algorithm, Version } from '@node-rs/argon2';
import { pbkdf2, randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';

// The native Argon2 binding costs a few MB of memory; a server whose users have no Argon2 hash
// (or no users at all) never loads it.
let argon2Binding: typeof import('@node-rs/argon2') | undefined;
function argon2(): typeof import('@node-rs/argon2') {
  argon2Binding ??= createRequire(import.meta.url)(
    '@node-rs/argon2',
  ) as typeof import('@node-rs/argon2');
  return argon2Binding;
}

// The callback forms run on the libuv thread pool; the *Sync forms would block the event loop.
const pbkdf2Async = promisify(pbkdf2);
// (promisify's typing picks scrypt's overload without options.)
function scryptAsync(
  password: string,
  salt: Buffer,
  length: number,
  options: ScryptOptions,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password, salt, length, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

// The package declares these as `const enum`s that exist only in its typings (at run time they are
// empty objects), so the values are spelled out.
const ARGON2ID = 2 as Algorithm.Argon2id;
const ARGON2_V19 = 1 as Version.V0x13;

// Caps on what a hash string may make one verification cost. Hashes come from configuration, but
// a typo or a hostile file must not be able to pin the thread pool or exhaust memory.
const MAX_PBKDF2_ITERATIONS = 10_000_000;
const MAX_SCRYPT_LOG_N = 20;
const MAX_SCRYPT_MEMORY = 1024 ** 3; // 128·N·r bytes: ln=20, r=8 (scrypt's heaviest usual profile)
const MAX_ARGON2_MEMORY_KIB = 4 * 1024 * 1024; // 4 GiB
// Bytes of memory a KDF may sweep in total: argon2 m·t, scrypt 128·N·r·p.
const MAX_KDF_TRAFFIC = 8 * 1024 ** 3;
// `password-hash` limits (`Salt::MIN_LENGTH`/`MAX_LENGTH` in B64 characters,
// `Output::MIN_LENGTH`/`MAX_LENGTH` in bytes): a string outside them never verifies in Ferron.
const SALT_CHARS = /^[A-Za-z0-9+/]{4,64}$/;
const MIN_OUTPUT = 10;
const MAX_OUTPUT = 64;

const PBKDF2_DIGESTS = new Map([
  ['pbkdf2', 'sha1'],
  ['pbkdf2-sha256', 'sha256'],
  ['pbkdf2-sha512', 'sha512'],
]);

// `$<id>[$<name>=<decimal>,…]$<salt>$<hash>`: the shape of every scrypt and PBKDF2 hash that
// `password-hash` accepts (neither algorithm takes a `v=` version field).
const KDF_PHC = /^\$([a-z0-9-]{1,32})(?:\$([^$]*=[^$]*))?\$([^$]*)\$([^$]*)$/;

type Verifier = (password: string) => Promise<boolean>;

/**
 * Hashes a password with password-auth's defaults, the parameters of Ferron's own hashes
 * (Argon2id, v=19, m=19456, t=2, p=1, 16-byte random salt, 32-byte output), so the PHC string
 * works in Ferron's configuration as well as Portico's. Runs off the event loop.
 */
export async function hashPassword(password: string): Promise<string> {
  return argon2().hash(password, {
    algorithm: ARGON2ID,
    version: ARGON2_V19,
    memoryCost: 19456,
    timeCost: 2,
    parallelism: 1,
    outputLen: 32,
    salt: randomBytes(16),
  });
}

/**
 * Checks a password against a PHC string of any algorithm password-auth verifies (argon2id,
 * argon2i, argon2d, scrypt, pbkdf2-sha256, pbkdf2-sha512) or RustCrypto pbkdf2's `$pbkdf2$`
 * (SHA-1), so hashes made for Ferron keep working. Resolves false, never rejects, for a wrong
 * password and for a hash that is malformed, unsupported or over the cost caps, so a bad `pass`
 * in configuration denies access instead of failing the request. The KDF always runs in full
 * and the comparison is constant-time, so a wrong password takes the same path as a right one.
 */
export async function verifyPassword(phc: string, password: string): Promise<boolean> {
  try {
    const verifier = verifierFor(phc);
    return verifier ? await verifier(password) : false;
  } catch {
    return false;
  }
}

/**
 * Whether `phc` is a well-formed hash of a supported algorithm within the cost caps, without
 * running the KDF: lets the configuration validator warn about a user whose `pass` can never
 * verify (a bcrypt or md5-crypt hash, a plain-text password, a typo).
 */
export function isSupportedPasswordHash(phc: string): boolean {
  try {
    return verifierFor(phc) !== null;
  } catch {
    return false;
  }
}

// Parses and bounds-checks `phc`; null when it cannot verify any password.
function verifierFor(phc: string): Verifier | null {
  if (/^\$argon2(id|i|d)\$/.test(phc)) {
    // The crate's own parser (throws on malformed input), so this agrees with verify() below.
    const { memoryCost, timeCost, outputLen } = argon2().parseOptions(phc);
    if (memoryCost > MAX_ARGON2_MEMORY_KIB || memoryCost * 1024 * timeCost > MAX_KDF_TRAFFIC) {
      return null;
    }
    // The binding's parser is laxer than Ferron's `password-hash` 0.5 about the output length.
    if (outputLen > MAX_OUTPUT) return null;
    return (password) => argon2().verify(phc, password);
  }

  const match = KDF_PHC.exec(phc);
  if (!match) return null;
  const [, id = '', paramList, saltB64 = '', hashB64 = ''] = match;
  const params = parseParams(paramList);
  // The salt string is checked as `Salt` does, then B64-decoded before it reaches the KDF.
  const salt = SALT_CHARS.test(saltB64) ? decodeB64(saltB64) : null;
  const expected = decodeB64(hashB64);
  if (!params || !salt || !expected) return null;
  if (expected.length < MIN_OUTPUT || expected.length > MAX_OUTPUT) return null;
  const derive = kdfFor(id, params, salt, expected.length);
  // Always the full KDF, then a constant-time compare of equal-length buffers.
  return derive && (async (password) => timingSafeEqual(await derive(password), expected));
}

// The KDF for a scrypt or PBKDF2 hash, producing `length` bytes; null when unsupported or over
// the caps.
function kdfFor(
  id: string,
  params: Record<string, number>,
  salt: Buffer,
  length: number,
): ((password: string) => Promise<Buffer>) | null {
  const digest = PBKDF2_DIGESTS.get(id);
  if (digest) {
    // pbkdf2 0.12 `Params`: `i` rounds (default 600000) and `l` output length (default 32),
    // which must equal the stored hash's length.
    const { i: iterations = 600_000, l = 32, ...unknown } = params;
    if (Object.keys(unknown).length > 0 || l !== length) return null;
    if (iterations < 1 || iterations > MAX_PBKDF2_ITERATIONS) return null;
    return (password) => pbkdf2Async(password, salt, iterations, length, digest);
  }
  if (id === 'scrypt') {
    // scrypt 0.11 `Params`: `ln` = log2 N (default 17), `r` (8), `p` (1); no length parameter.
    const { ln = 17, r = 8, p = 1, ...unknown } = params;
    if (Object.keys(unknown).length > 0) return null;
    // Node needs N > 1, RFC 7914 needs N < 2^(16r); the traffic cap also keeps r·p < 2^30.
    if (ln < 1 || ln > MAX_SCRYPT_LOG_N || r < 1 || p < 1 || ln >= 16 * r) return null;
    const memory = 128 * 2 ** ln * r;
    if (memory > MAX_SCRYPT_MEMORY || memory * p > MAX_KDF_TRAFFIC) return null;
    // maxmem leaves room over OpenSSL's own accounting; the real cap is the check above.
    const options = { N: 2 ** ln, r, p, maxmem: 2 * MAX_SCRYPT_MEMORY };
    return (password) => scryptAsync(password, salt, length, options);
  }
  return null;
}

// `name=decimal,…` as `password-hash` reads it: unique names, decimals without leading zeros
// that fit a u32. An absent list is no parameters.
function parseParams(list: string | undefined): Record<string, number> | null {
  const params: Record<string, number> = {};
  for (const pair of list ? list.split(',') : []) {
    const [, name = '', value = ''] = /^([a-z0-9-]{1,32})=(0|[1-9][0-9]{0,9})$/.exec(pair) ?? [];
    if (!name || Number(value) > 0xffff_ffff || Object.hasOwn(params, name)) return null;
    params[name] = Number(value);
  }
  return params;
}

// B64 is standard base64 without padding. Like base64ct, this refuses any other character and a
// lone final character (a remainder of 1 encodes no byte).
function decodeB64(text: string): Buffer | null {
  return /^[A-Za-z0-9+/]*$/.test(text) && text.length % 4 !== 1
    ? Buffer.from(text, 'base64')
    : null;
}
