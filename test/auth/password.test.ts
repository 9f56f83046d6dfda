import assert from 'node:assert/strict';
import { pbkdf2Sync, scryptSync } from 'node:crypto';
import { test } from 'node:test';
import { hash as argon2Hash } from '@node-rs/argon2';
import { hashPassword, isSupportedPasswordHash, verifyPassword } from '../../src/auth/password.js';
import { cpuClock } from '../helpers/cpu.js';

// PHC "B64": standard base64 without padding.
const b64 = (bytes: Uint8Array | string): string =>
  Buffer.from(bytes).toString('base64').replace(/=+$/, '');
const hex = (text: string): Buffer => Buffer.from(text.replace(/\s/g, ''), 'hex');

async function assertVerifies(phc: string, password: string): Promise<void> {
  assert.equal(isSupportedPasswordHash(phc), true, phc);
  assert.equal(await verifyPassword(phc, password), true, `${phc} should verify ${password}`);
  assert.equal(await verifyPassword(phc, `${password}x`), false, phc);
  assert.equal(await verifyPassword(phc, ''), false, phc);
}

test("hashPassword: Argon2id with exactly Ferron's parameters, random salt, verifies", async () => {
  const phc = await hashPassword('hunter2');
  const match = /^\$argon2id\$v=19\$m=19456,t=2,p=1\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/.exec(phc);
  assert.ok(match, phc);
  assert.equal(Buffer.from(match[1] ?? '', 'base64').length, 16);
  assert.equal(Buffer.from(match[2] ?? '', 'base64').length, 32);
  await assertVerifies(phc, 'hunter2');
  assert.notEqual(await hashPassword('hunter2'), phc);
  await assertVerifies(await hashPassword('pässwörd ✓'), 'pässwörd ✓');
});

// Vectors copied from RustCrypto/password-hashes, password-auth/src/lib.rs at tag
// password-auth-v1.0.0 (the version Ferron uses): each is the hash of "password".
test('password-auth 1.0 test vectors verify', async () => {
  await assertVerifies(
    '$argon2i$v=19$m=65536,t=1,p=1$c29tZXNhbHQAAAAAAAAAAA$+r0d29hqEB0yasKr55ZgICsQGSkl0v0kgwhd+U3wyRo',
    'password',
  );
  // Salt "c2FsdA" is B64 for "salt": this is RFC 7914's PBKDF2-HMAC-SHA256("password", "salt",
  // 4096) = c5e478d5…, so it only verifies if the salt is B64-decoded before the KDF.
  await assertVerifies(
    '$pbkdf2-sha256$i=4096,l=32$c2FsdA$xeR41ZKIyEGqUw22hFxMjZYok6ABzk4RpJY4c6qYE0o',
    'password',
  );
  await assertVerifies(
    '$scrypt$ln=16,r=8,p=1$aM15713r3Xsvxbi31lqr1Q$nFNh2CVHVjNldFVKDHDlm4CbdRSCdEBsjjJxD+iCs5E',
    'password',
  );
});

// Copied from RustCrypto/password-hashes pbkdf2/src/phc.rs (EXPECTED_HASH, RFC 6070 inputs with
// SHA-256 and a 40-byte output).
test('pbkdf2 crate PHC test vector verifies', async () => {
  await assertVerifies(
    '$pbkdf2-sha256$i=4096,l=40$c2FsdFNBTFRzYWx0U0FMVHNhbHRTQUxUc2FsdFNBTFRzYWx0' +
      '$NIyJ28vTKy8y2BS4EW6EzysXNH68GAAYHE4qH7jdU+HGNVGMfaxH6Q',
    'passwordPASSWORDpassword',
  );
});

// Raw KDF outputs from RustCrypto's own tests (pbkdf2/tests/pbkdf2.rs: RFC 6070 and its SHA-256
// and SHA-512 tables; scrypt/tests/mod.rs: RFC 7914), wrapped into PHC strings the way the crates write them:
// B64 of the salt bytes, parameters by name, output length = hash length.
test('RustCrypto KDF vectors as PHC strings: $pbkdf2$ (SHA-1), sha256, sha512, scrypt', async () => {
  const salt = b64('salt');
  const sha1 = (rounds: number, output: string) =>
    `$pbkdf2$i=${rounds},l=20$${salt}$${b64(hex(output))}`;
  await assertVerifies(sha1(4096, '4b007901b765489abead49d926f721d065a429c1'), 'password');
  await assertVerifies(sha1(2, 'ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957'), 'password');
  await assertVerifies(
    `$pbkdf2-sha256$i=4096,l=20$${salt}$${b64(hex('c5e478d59288c841aa530db6845c4c8d962893a0'))}`,
    'password',
  );
  await assertVerifies(
    `$pbkdf2-sha512$i=4096,l=20$${salt}$${b64(hex('d197b1b33db0143e018b12f3d1d1479e6cdebdcc'))}`,
    'password',
  );
  const rfc7914 = hex(`
    7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2
    d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887`);
  await assertVerifies(
    `$scrypt$ln=14,r=8,p=1$${b64('SodiumChloride')}$${b64(rfc7914)}`,
    'pleaseletmein',
  );
  const nacl = hex(`
    fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162
    2eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640`);
  await assertVerifies(`$scrypt$ln=10,r=8,p=16$${b64('NaCl')}$${b64(nacl)}`, 'password');
});

// Our own vectors, built with Node's crypto the way the Rust crates build them.
test('hashes built the way the crates build them verify, including default parameters', async () => {
  const salt = Buffer.from('0123456789abcdef');
  const pw = 'correct horse battery staple';
  const pbkdf2 = (iterations: number, length: number, digest: string) =>
    pbkdf2Sync(pw, salt, iterations, length, digest);
  await assertVerifies(
    `$pbkdf2-sha256$i=1000,l=32$${b64(salt)}$${b64(pbkdf2(1000, 32, 'sha256'))}`,
    pw,
  );
  await assertVerifies(
    `$pbkdf2-sha512$i=1000,l=64$${b64(salt)}$${b64(pbkdf2(1000, 64, 'sha512'))}`,
    pw,
  );
  await assertVerifies(`$pbkdf2$i=1000,l=10$${b64(salt)}$${b64(pbkdf2(1000, 10, 'sha1'))}`, pw);
  // Without parameters pbkdf2 0.12 uses i=600000, l=32.
  await assertVerifies(`$pbkdf2-sha256$${b64(salt)}$${b64(pbkdf2(600_000, 32, 'sha256'))}`, pw);
  // scrypt's output length is the stored hash's; without parameters ln=17, r=8, p=1.
  const scrypt = (N: number, r: number, p: number, length: number) =>
    scryptSync(pw, salt, length, { N, r, p, maxmem: 256 * 1024 ** 2 });
  await assertVerifies(`$scrypt$ln=12,r=4,p=2$${b64(salt)}$${b64(scrypt(4096, 4, 2, 48))}`, pw);
  await assertVerifies(`$scrypt$${b64(salt)}$${b64(scrypt(2 ** 17, 8, 1, 32))}`, pw);
  // The other Argon2 variants, through the same crate.
  for (const algorithm of [0, 1, 2]) {
    const phc = await argon2Hash(pw, { algorithm, memoryCost: 64, timeCost: 1, salt });
    assert.match(phc, /^\$argon2(d|i|id)\$v=19\$m=64,t=1,p=1\$/);
    await assertVerifies(phc, pw);
  }
});

test('the KDF is given the B64-decoded salt, not the salt string', async () => {
  const saltText = b64('16 bytes of salt');
  const wrong = pbkdf2Sync('pw', saltText, 1000, 32, 'sha256');
  const right = pbkdf2Sync('pw', Buffer.from('16 bytes of salt'), 1000, 32, 'sha256');
  assert.equal(
    await verifyPassword(`$pbkdf2-sha256$i=1000,l=32$${saltText}$${b64(wrong)}`, 'pw'),
    false,
  );
  assert.equal(
    await verifyPassword(`$pbkdf2-sha256$i=1000,l=32$${saltText}$${b64(right)}`, 'pw'),
    true,
  );
});

test('unsupported and malformed hashes are false, never a throw', async () => {
  const good = '$pbkdf2-sha256$i=4096,l=32$c2FsdA$xeR41ZKIyEGqUw22hFxMjZYok6ABzk4RpJY4c6qYE0o';
  await assertVerifies(good.replace(',l=32', ''), 'password');
  const bad = [
    '',
    'password',
    '$',
    '$$$$',
    '$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW', // bcrypt
    '$1$saltsalt$2vnaRpHa6Jxjz5n83ok8Z0', // md5-crypt
    '$5$rounds=5000$saltsalt$Gcm6FsVtF/Qa77ZKD.iwsJlCVPY0XSMgLJL0Hnww/c1', // sha256-crypt
    '$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHQAAAAAAAAAAA', // no hash
    '$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHQAAAAAAAAAAA$+r0d', // hash too short
    '$argon2id$v=18$m=19456,t=2,p=1$c29tZXNhbHQAAAAAAAAAAA$+r0d29hqEB0yasKr55ZgICsQGSkl0v0kgwhd+U3wyRo',
    '$argon2x$v=19$m=19456,t=2,p=1$c29tZXNhbHQAAAAAAAAAAA$+r0d29hqEB0yasKr55ZgICsQGSkl0v0kgwhd+U3wyRo',
    good.replace('pbkdf2-sha256', 'pbkdf2-sha384'),
    good.replace('pbkdf2-sha256', 'constructor'),
    good.replace('$pbkdf2-sha256', '$pbkdf2-sha256$v=19'), // pbkdf2 takes no version
    good.replace('i=4096', 'i=4096,x=1'), // unknown parameter
    good.replace('i=4096', 'i=4096,i=4096'), // duplicate parameter
    good.replace('i=4096', 'i=04096'), // leading zero
    good.replace('i=4096', 'i=0'),
    good.replace('i=4096', 'i=4096=1'),
    good.replace('i=4096', 'i=-1'),
    good.replace('l=32', 'l=31'), // length disagrees with the hash (absent, it defaults to 32)
    `$pbkdf2-sha256$i=4096$c2FsdA$${b64(hex('c5e478d59288c841aa530db6845c4c8d962893a0'))}`, // 20 ≠ 32
    good.replace('c2FsdA', 'c2FsdA=='), // padding is not B64
    good.replace('c2FsdA', 'c2Fsd'), // a lone trailing character
    good.replace('c2FsdA', 'c2F'), // shorter than Salt::MIN_LENGTH
    good.replace('c2FsdA', 'c2F.dA'), // not the base64 alphabet
    good.replace('c2FsdA', 'A'.repeat(65)), // longer than Salt::MAX_LENGTH
    good.replace('xeR4', 'xe_4'),
    `${good}$`,
    `${good}\n`,
    ` ${good}`,
    '$pbkdf2-sha256$i=4096,l=8$c2FsdA$xeR41ZKIyEE', // shorter than Output::MIN_LENGTH
    '$scrypt$ln=0,r=8,p=1$c2FsdA$xeR41ZKIyEGqUw22hFxMjZYok6ABzk4RpJY4c6qYE0o',
    '$scrypt$ln=16,r=1,p=1$c2FsdA$xeR41ZKIyEGqUw22hFxMjZYok6ABzk4RpJY4c6qYE0o', // N ≥ 2^(16r)
    '$scrypt$ln=10,r=0,p=1$c2FsdA$xeR41ZKIyEGqUw22hFxMjZYok6ABzk4RpJY4c6qYE0o',
    '$scrypt$ln=10,r=8,p=0$c2FsdA$xeR41ZKIyEGqUw22hFxMjZYok6ABzk4RpJY4c6qYE0o',
    '$scrypt$ln=10,r=8,p=1,l=32$c2FsdA$xeR41ZKIyEGqUw22hFxMjZYok6ABzk4RpJY4c6qYE0o',
  ];
  for (const phc of bad) {
    assert.equal(isSupportedPasswordHash(phc), false, `isSupported(${JSON.stringify(phc)})`);
    assert.equal(await verifyPassword(phc, 'password'), false, `verify(${JSON.stringify(phc)})`);
  }
});

test('costs over the caps are refused up front, quickly', async () => {
  const salt = b64('0123456789abcdef');
  const hash = (bytes: number): string => b64(Buffer.alloc(bytes, 7));
  const argon = (params: string, bytes = 32): string =>
    `$argon2id$v=19$${params}$${salt}$${hash(bytes)}`;
  const hostile = [
    `$pbkdf2-sha256$i=10000001,l=32$${salt}$${hash(32)}`,
    `$pbkdf2-sha256$i=4294967295,l=32$${salt}$${hash(32)}`,
    `$pbkdf2-sha256$i=4294967296,l=32$${salt}$${hash(32)}`, // not a u32
    `$pbkdf2-sha512$i=1000,l=1025$${salt}$${hash(1025)}`,
    `$pbkdf2-sha512$i=1000,l=65$${salt}$${hash(65)}`, // over Output::MAX_LENGTH
    `$scrypt$ln=21,r=8,p=1$${salt}$${hash(32)}`,
    `$scrypt$ln=63,r=8,p=1$${salt}$${hash(32)}`,
    `$scrypt$ln=20,r=9,p=1$${salt}$${hash(32)}`, // memory over 1 GiB
    `$scrypt$ln=20,r=8,p=9$${salt}$${hash(32)}`, // r·p: traffic over 8 GiB
    `$scrypt$ln=10,r=1,p=1073741823$${salt}$${hash(32)}`,
    `$scrypt$ln=14,r=8,p=1$${salt}$${hash(2000)}`,
    argon('m=4194305,t=1,p=1'), // over 4 GiB
    argon('m=4294967295,t=1,p=1'),
    argon('m=4194304,t=3,p=1'), // 4 GiB three times
    argon('m=19456,t=4294967295,p=1'),
    argon('m=19456,t=2,p=1', 65),
    argon('m=19456,t=2,p=1', 1025),
  ];
  const cpu = cpuClock();
  for (const phc of hostile) {
    assert.equal(isSupportedPasswordHash(phc), false, phc);
    assert.equal(await verifyPassword(phc, 'password'), false, phc);
  }
  assert.ok(cpu() < 1000, 'refusals must not run the KDF');
  // The caps themselves are allowed (checked syntactically only: running these would be slow).
  for (const phc of [
    `$pbkdf2-sha256$i=10000000,l=32$${salt}$${hash(32)}`,
    `$scrypt$ln=20,r=8,p=1$${salt}$${hash(32)}`,
    `$scrypt$ln=20,r=8,p=8$${salt}$${hash(64)}`,
    argon('m=4194304,t=2,p=1'),
  ]) {
    assert.equal(isSupportedPasswordHash(phc), true, phc);
  }
});
