// The OCSP wire format (RFC 6960) on the @peculiar/asn1-* schemas: the fields OCSP needs from a
// certificate, the CertID and the request for one certificate, and the status a response gives
// for it. The responder's signature is not verified here: the client that gets the staple does
// that. Anything malformed throws a DerError saying what.

import { createHash } from 'node:crypto';
import {
  BasicOCSPResponse,
  CertID,
  OCSPRequest,
  OCSPResponse,
  OCSPResponseStatus,
  Request,
  TBSRequest,
  id_pkix_ocsp_basic,
  type CertStatus,
} from '@peculiar/asn1-ocsp';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import {
  AlgorithmIdentifier,
  AuthorityInfoAccessSyntax,
  Certificate,
  id_ad_ocsp,
  id_pe_authorityInfoAccess,
} from '@peculiar/asn1-x509';
import { DerError, decode, elements, readGeneralizedTime } from './strict-der.js';

const SHA1 = '1.3.14.3.2.26';

const bytes = (data: ArrayBuffer | Uint8Array): Buffer =>
  data instanceof Uint8Array
    ? Buffer.from(data.buffer, data.byteOffset, data.byteLength)
    : Buffer.from(data);

// ---- Certificates -------------------------------------------------------------------------------

export interface CertificateFields {
  /** The contents of the serialNumber INTEGER. */
  readonly serialNumber: Buffer;
  /** The DER-encoded issuer and subject Names. */
  readonly issuer: Buffer;
  readonly subject: Buffer;
  /** The contents of the subjectPublicKey BIT STRING. */
  readonly publicKey: Buffer;
  /** Every URI of an OCSP access description in Authority Information Access, in order. */
  readonly ocspUris: readonly string[];
}

/** The fields OCSP needs from a DER-encoded X.509 certificate. */
export function parseCertificate(der: Buffer): CertificateFields {
  const certificate = decode(der, Certificate, 'Certificate');
  const tbs = certificate.tbsCertificate;
  // The names are hashed and compared as they were signed: taken as encoded, not encoded again.
  const fields = elements(certificate.tbsCertificateRaw, 'TBSCertificate');
  // version [0] is absent from v1 certificates.
  const at = fields[0]?.[0] === 0xa0 ? 1 : 0;
  const name = (index: number, what: string): Buffer => {
    const field = fields[index];
    if (!field) throw new DerError(`TBSCertificate: ${what} missing`);
    return bytes(field);
  };
  return {
    serialNumber: bytes(tbs.serialNumber),
    issuer: name(at + 2, 'issuer'),
    subject: name(at + 4, 'subject'),
    publicKey: bytes(tbs.subjectPublicKeyInfo.subjectPublicKey),
    ocspUris: ocspUris(certificate),
  };
}

function ocspUris(certificate: Certificate): string[] {
  const extension = certificate.tbsCertificate.extensions?.find(
    (candidate) => candidate.extnID === id_pe_authorityInfoAccess,
  );
  if (!extension) return [];
  const access = decode(
    new Uint8Array(extension.extnValue.buffer),
    AuthorityInfoAccessSyntax,
    'AuthorityInfoAccess',
  );
  // Only a uniformResourceIdentifier names a responder that can be asked.
  return access.flatMap(({ accessMethod, accessLocation }) => {
    const uri = accessLocation.uniformResourceIdentifier;
    return accessMethod === id_ad_ocsp && uri !== undefined ? [uri] : [];
  });
}

/** The first OCSP responder of `certificate` that can be reached over http:// or https://. */
export function responderUrl(certificate: CertificateFields): URL | undefined {
  for (const uri of certificate.ocspUris) {
    const url = URL.canParse(uri) ? new URL(uri) : undefined;
    if (url?.protocol === 'http:' || url?.protocol === 'https:') return url;
  }
  return undefined;
}

/** The DER certificates of a PEM chain, in order. */
export function pemCertificates(pem: string | Buffer): Buffer[] {
  const blocks = pem
    .toString()
    .matchAll(/-----BEGIN CERTIFICATE-----([A-Za-z0-9+/=\s]*)-----END CERTIFICATE-----/g);
  return [...blocks].map((block) => Buffer.from(block[1] ?? '', 'base64'));
}

// ---- Requests and responses ---------------------------------------------------------------------

/** RFC 6960 CertID, always with SHA-1, which every responder understands. */
export interface CertId {
  readonly issuerNameHash: Buffer;
  readonly issuerKeyHash: Buffer;
  readonly serialNumber: Buffer;
}

const sha1 = (data: Buffer): Buffer => createHash('sha1').update(data).digest();

export function certIdFor(certificate: CertificateFields, issuer: CertificateFields): CertId {
  return {
    issuerNameHash: sha1(issuer.subject),
    issuerKeyHash: sha1(issuer.publicKey),
    serialNumber: certificate.serialNumber,
  };
}

/** An OCSPRequest for one certificate: unsigned, no nonce (so that responses can be cached). */
export function encodeOcspRequest(id: CertId): Buffer {
  const reqCert = new CertID({
    // parameters NULL, as every implementation writes it.
    hashAlgorithm: new AlgorithmIdentifier({ algorithm: SHA1, parameters: null }),
    issuerNameHash: new OctetString(id.issuerNameHash),
    issuerKeyHash: new OctetString(id.issuerKeyHash),
    serialNumber: new Uint8Array(id.serialNumber).buffer,
  });
  // version v1 is the default, so it is left out.
  const request = new OCSPRequest({
    tbsRequest: new TBSRequest({ requestList: [new Request({ reqCert })] }),
  });
  return Buffer.from(AsnConvert.serialize(request));
}

export interface OcspStatus {
  readonly certStatus: 'good' | 'revoked' | 'unknown';
  readonly thisUpdate: Date;
  /** Absent when the responder always has newer information. */
  readonly nextUpdate: Date | undefined;
}

/** The status of the certificate `id` in a DER OCSPResponse. Throws if there is none. */
export function parseOcspResponse(der: Buffer, id: CertId): OcspStatus {
  const response = decode(der, OCSPResponse, 'OCSPResponse');
  const code = response.responseStatus;
  if (code !== OCSPResponseStatus.successful)
    throw new Error(`the responder answered ${OCSPResponseStatus[code] ?? `status ${code}`}`);
  const responseBytes = response.responseBytes;
  if (!responseBytes) throw new DerError('OCSPResponse: responseBytes missing');
  const responseType = responseBytes.responseType;
  if (responseType !== id_pkix_ocsp_basic)
    throw new Error(`unsupported response type ${responseType}`);
  const basic = decode(
    new Uint8Array(responseBytes.response.buffer),
    BasicOCSPResponse,
    'BasicOCSPResponse',
  );
  const responses = basic.tbsResponseData.responses;
  const index = responses.findIndex((single) => isCertId(single.certID, id));
  const single = responses[index];
  if (!single)
    throw new Error(
      'the response has no status for this certificate (serial number or issuer differ)',
    );
  // The times are read from their encodings, which DER allows in one form only.
  const data = elements(basic.tbsResponseDataRaw, 'ResponseData');
  // version [0], responderID, producedAt, responses: the version is usually left out.
  const at = data[0]?.[0] === 0xa0 ? 1 : 0;
  const fields = elements(elements(data[at + 2], 'responses')[index], 'SingleResponse');
  return {
    certStatus: readCertStatus(single.certStatus),
    thisUpdate: readGeneralizedTime(fields[2], 'thisUpdate'),
    // nextUpdate [0] EXPLICIT, present when the parser found one.
    nextUpdate:
      single.nextUpdate && readGeneralizedTime(elements(fields[3], 'nextUpdate')[0], 'nextUpdate'),
  };
}

function isCertId(certId: CertID, id: CertId): boolean {
  // Responders echo the request's CertID, so a SHA-1 one is all that can be ours.
  return (
    certId.hashAlgorithm.algorithm === SHA1 &&
    bytes(certId.issuerNameHash.buffer).equals(id.issuerNameHash) &&
    bytes(certId.issuerKeyHash.buffer).equals(id.issuerKeyHash) &&
    bytes(certId.serialNumber).equals(id.serialNumber)
  );
}

function readCertStatus(status: CertStatus): OcspStatus['certStatus'] {
  // good [0] and unknown [2] are NULLs: the alternative present is the one that is not undefined.
  if (status.good !== undefined) return 'good';
  if (status.revoked !== undefined) return 'revoked';
  if (status.unknown !== undefined) return 'unknown';
  throw new DerError('certStatus: neither good, revoked nor unknown');
}
