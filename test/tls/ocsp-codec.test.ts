import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { AsnConvert } from '@peculiar/asn1-schema';
import {
  AttributeTypeAndValue,
  AttributeValue,
  Certificate,
  Name,
  RelativeDistinguishedName,
  Version,
} from '@peculiar/asn1-x509';

import {
  encodeOcspRequest,
  parseCertificate,
  parseOcspResponse,
  responderUrl,
} from '../../src/tls/ocsp-codec.js';
import { DerError } from '../../src/tls/strict-der.js';
import { SKIP, certIdOf, makePki, offlineResponse, openssl, type Pki } from './ocsp-pki.js';

let pki: Pki | undefined;

before(async () => {
  if (!SKIP) pki = await makePki();
});

after(() => pki?.close());

function thePki(): Pki {
  assert.ok(pki, 'the PKI was not made');
  return pki;
}

/** `der` followed by bytes that are not part of it. */
const withTrailing = (der: Buffer, extra: Buffer): Buffer => Buffer.concat([der, extra]);

/** Every truncation and 2000 one-bit flips of `der`: each throws a DerError or an Error of ours. */
function assertHostileInputRefused(der: Buffer, parse: (input: Buffer) => unknown): void {
  for (let length = 0; length < der.length; length++)
    assert.throws(() => parse(der.subarray(0, length)), DerError, `prefix of ${length} bytes`);
  for (let i = 0; i < 2000; i++) {
    const mutated = Buffer.from(der);
    const at = Math.floor(Math.random() * mutated.length);
    mutated[at] = (mutated[at] ?? 0) ^ (1 << Math.floor(Math.random() * 8));
    try {
      parse(mutated);
    } catch (err) {
      assert.ok(
        err instanceof Error && !(err instanceof RangeError) && !(err instanceof TypeError),
        String(err),
      );
    }
  }
}

describe('OCSP responder URLs', () => {
  it('takes the first http(s) responder and ignores other schemes', () => {
    const fields = {
      serialNumber: Buffer.alloc(1),
      issuer: Buffer.alloc(0),
      subject: Buffer.alloc(0),
      publicKey: Buffer.alloc(0),
    };
    assert.equal(
      responderUrl({ ...fields, ocspUris: ['ldap://x/', 'not a url', 'https://ocsp.example/'] })
        ?.href,
      'https://ocsp.example/',
    );
    assert.equal(
      responderUrl({ ...fields, ocspUris: ['ldap://x/', 'file:///etc/passwd'] }),
      undefined,
    );
  });
});

describe('certificates', { skip: SKIP }, () => {
  it('reads serial number, names, key and responder from a certificate', () => {
    const p = thePki();
    const good = parseCertificate(p.der.good);
    assert.equal(good.serialNumber.toString('hex'), '00f23456789a');
    assert.equal(good.ocspUris.length, 1);
    assert.match(responderUrl(good)?.href ?? '', /^http:\/\/127\.0\.0\.1:\d+\/$/);
    const ca = parseCertificate(p.caDer);
    assert.ok(good.issuer.equals(ca.subject));
    assert.deepEqual(parseCertificate(p.der.noAia).ocspUris, []);
  });

  it('reads a v1 certificate (no version field), and takes names as encoded, not re-encoded', () => {
    const p = thePki();
    const certificate = AsnConvert.parse(p.der.good, Certificate);
    // A UTF8String that is not UTF-8: decoding and encoding it again would change its bytes.
    const subject = new Name([
      new RelativeDistinguishedName([
        new AttributeTypeAndValue({
          type: '2.5.4.3',
          value: new AttributeValue({ anyValue: new Uint8Array([0x0c, 0x02, 0xc3, 0x28]).buffer }),
        }),
      ]),
    ]);
    const subjectDer = Buffer.from(AsnConvert.serialize(subject));
    const reencoded = Buffer.from(AsnConvert.serialize(AsnConvert.parse(subjectDer, Name)));
    assert.notDeepEqual(reencoded, subjectDer, 'the library does not keep these bytes');
    certificate.tbsCertificate.version = Version.v1;
    certificate.tbsCertificate.subject = subject;
    certificate.tbsCertificate.extensions = undefined;
    const v1 = Buffer.from(AsnConvert.serialize(certificate));
    // The TBSCertificate starts with the serial number: no [0] version.
    assert.equal(v1.toString('hex').includes('a003020102'), false);
    const fields = parseCertificate(v1);
    assert.deepEqual(fields.subject, subjectDer);
    assert.deepEqual(fields.issuer, parseCertificate(p.caDer).subject);
    assert.equal(fields.serialNumber.toString('hex'), '00f23456789a');
    assert.deepEqual(fields.publicKey, parseCertificate(p.der.good).publicKey);
    assert.deepEqual(fields.ocspUris, []);
  });

  it('refuses damaged certificates and trailing data with a DerError', () => {
    const p = thePki();
    assert.throws(
      () => parseCertificate(withTrailing(p.der.good, Buffer.from([0]))),
      /^DerError: Certificate: 1 bytes of trailing data$/,
    );
    assertHostileInputRefused(p.der.good, parseCertificate);
  });
});

describe('OCSP requests and responses', { skip: SKIP }, () => {
  it('builds the same request as `openssl ocsp -reqout -no_nonce`', () => {
    const p = thePki();
    for (const leaf of ['good', 'revoked'] as const) {
      openssl(p.dir, [
        'ocsp',
        '-issuer',
        'ca.crt',
        '-cert',
        `${leaf}.crt`,
        '-reqout',
        `${leaf}.openssl.req`,
        '-no_nonce',
      ]);
      const expected = readFileSync(join(p.dir, `${leaf}.openssl.req`));
      assert.equal(
        encodeOcspRequest(certIdOf(p, leaf)).toString('hex'),
        expected.toString('hex'),
        leaf,
      );
    }
  });

  it("parses the responder's answers: good, revoked, unknown, with and without nextUpdate", () => {
    const p = thePki();
    const started = Date.now() - 2000;
    const good = parseOcspResponse(offlineResponse(p, 'good', ['-nmin', '5']), certIdOf(p, 'good'));
    assert.equal(good.certStatus, 'good');
    assert.ok(
      good.thisUpdate.getTime() >= started && good.thisUpdate.getTime() <= Date.now(),
      good.thisUpdate.toISOString(),
    );
    assert.equal(good.nextUpdate?.getTime(), good.thisUpdate.getTime() + 5 * 60_000);
    assert.equal(
      parseOcspResponse(offlineResponse(p, 'good', []), certIdOf(p, 'good')).nextUpdate,
      undefined,
    );
    assert.equal(
      parseOcspResponse(offlineResponse(p, 'revoked', ['-ndays', '1']), certIdOf(p, 'revoked'))
        .certStatus,
      'revoked',
    );
    assert.equal(
      parseOcspResponse(offlineResponse(p, 'unknown', ['-ndays', '1']), certIdOf(p, 'unknown'))
        .certStatus,
      'unknown',
    );
  });

  it('refuses a response about another certificate, an unsuccessful one, and damaged ones', () => {
    const p = thePki();
    const response = offlineResponse(p, 'good', ['-nmin', '5']);
    const id = certIdOf(p, 'good');
    assert.throws(
      () => parseOcspResponse(response, certIdOf(p, 'revoked')),
      /no status for this certificate/,
    );
    // OCSPResponse { responseStatus ENUMERATED }, without responseBytes.
    const unsuccessful = (status: number): Buffer => Buffer.from([0x30, 3, 0x0a, 1, status]);
    assert.throws(() => parseOcspResponse(unsuccessful(3), id), /answered tryLater$/);
    assert.throws(() => parseOcspResponse(unsuccessful(4), id), /answered status 4$/);
    assert.throws(
      () => parseOcspResponse(unsuccessful(0), id),
      /^DerError: OCSPResponse: responseBytes missing$/,
    );
    assert.throws(
      () => parseOcspResponse(withTrailing(response, Buffer.from([5, 0])), id),
      /^DerError: OCSPResponse: 2 bytes of trailing data$/,
    );
    assertHostileInputRefused(response, (input) => parseOcspResponse(input, id));
  });

  it('refuses times in the forms BER allows and DER does not', () => {
    const p = thePki();
    const response = offlineResponse(p, 'good', ['-nmin', '5']);
    const id = certIdOf(p, 'good');
    // producedAt, thisUpdate, nextUpdate: GeneralizedTimes of 15 characters (18 0f …Z).
    const times = [...response.toString('latin1').matchAll(/\x18\x0f\d{14}Z/g)];
    assert.equal(times.length, 3);
    for (const [which, time] of [
      ['thisUpdate', times[1]],
      ['nextUpdate', times[2]],
    ] as const) {
      // Hours and an offset from UTC: 15 characters too, and asn1js reads them wrongly.
      const offset = Buffer.from(response);
      offset.write('+0100', (time?.index ?? 0) + 2 + 10, 'latin1');
      assert.throws(
        () => parseOcspResponse(offset, id),
        new RegExp(`^DerError: ${which}: "\\d{10}\\+0100" is not a UTC GeneralizedTime$`),
      );
    }
  });
});

describe('DER on hostile input', () => {
  const id = {
    issuerNameHash: Buffer.alloc(20),
    issuerKeyHash: Buffer.alloc(20),
    serialNumber: Buffer.from([1]),
  };

  it('refuses indefinite lengths, which BER allows and DER does not', () => {
    // OCSPResponse { tryLater } with the indefinite form and its end-of-contents octets.
    assert.throws(
      () => parseOcspResponse(Buffer.from('30800a01030000', 'hex'), id),
      /^DerError: OCSPResponse: indefinite length is not DER$/,
    );
  });

  it('random bytes: a DerError, quickly, never anything else', () => {
    const started = performance.now();
    for (let i = 0; i < 3000; i++) {
      const input = randomBytes(1 + Math.floor(Math.random() * 64));
      for (const parse of [() => parseCertificate(input), () => parseOcspResponse(input, id)])
        assert.throws(parse, DerError, input.toString('hex'));
    }
    assert.ok(performance.now() - started < 5000);
  });

  it('deep nesting is refused without exhausting the stack', () => {
    let nested = Buffer.from([0x05, 0x00]);
    while (nested.length < 60_000) {
      const length = nested.length;
      const header =
        length < 0x80
          ? [0x30, length]
          : length < 0x100
            ? [0x30, 0x81, length]
            : [0x30, 0x82, length >> 8, length & 0xff];
      nested = Buffer.concat([Buffer.from(header), nested]);
    }
    assert.throws(() => parseOcspResponse(nested, id), /^DerError: OCSPResponse: .*depth/);
    assert.throws(() => parseCertificate(nested), /^DerError: Certificate: .*depth/);
  });

  it('a huge declared length is refused without allocating', () => {
    assert.throws(
      () => parseOcspResponse(Buffer.from('3084ffffffff00', 'hex'), id),
      /^DerError: OCSPResponse: /,
    );
  });
});
