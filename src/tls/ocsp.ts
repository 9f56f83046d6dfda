// OCSP stapling (RFC 6960, RFC 6066 status_request). A handshake is answered at once from a
// cache keyed by certificate fingerprint; responses are fetched from the responder named in the
// certificate's Authority Information Access extension, in the background, and refreshed before
// their nextUpdate. The responder's signature is not verified here: the client does that.
//
// Only a `good` status is stapled. A `revoked` or `unknown` answer is logged and the certificate
// is served without a staple (as nginx does): a stapled "revoked" would make strict clients
// refuse the site outright, while without a staple they fall back to their own checks. The
// operator learns of it from the log and has to replace the certificate either way.

import { createHash, X509Certificate } from 'node:crypto';
import http, { type IncomingMessage } from 'node:http';
import { httpsModule } from './lazy-modules.js';

import {
  children,
  contextTag,
  decode,
  encode,
  encodeOid,
  expectTag,
  explicit,
  readBitString,
  readGeneralizedTime,
  readNull,
  readOid,
  readSmallInteger,
  Tag,
  type DerElement,
} from './der.js';

const OID = {
  authorityInfoAccess: '1.3.6.1.5.5.7.1.1',
  ocsp: '1.3.6.1.5.5.7.48.1',
  ocspBasic: '1.3.6.1.5.5.7.48.1.1',
  sha1: '1.3.14.3.2.26',
} as const;

const HOUR_MS = 3_600_000;
/** The first retry after a failure; each further failure doubles it, up to an hour. */
const RETRY_FIRST_MS = 60_000;
const MAX_ENTRIES = 1000;
/** setTimeout fires at once for longer delays, so long-lived responses are refreshed this soon. */
const MAX_TIMER_MS = 2 ** 31 - 1;
export const MAX_RESPONSE_BYTES = 64 * 1024;

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
  const [tbs] = children(
    expectTag(decode(der, 'Certificate'), Tag.SEQUENCE, 'Certificate'),
    'Certificate',
  );
  const fields = children(expectTag(tbs, Tag.SEQUENCE, 'TBSCertificate'), 'TBSCertificate');
  // version [0] is absent from v1 certificates.
  const at = fields[0]?.tag === contextTag(0, true) ? 1 : 0;
  const spki = children(
    expectTag(fields[at + 5], Tag.SEQUENCE, 'subjectPublicKeyInfo'),
    'subjectPublicKeyInfo',
  );
  const extensions = fields.slice(at + 6).find((field) => field.tag === contextTag(3, true));
  return {
    serialNumber: expectTag(fields[at], Tag.INTEGER, 'serialNumber').content,
    issuer: expectTag(fields[at + 2], Tag.SEQUENCE, 'issuer').encoded,
    subject: expectTag(fields[at + 4], Tag.SEQUENCE, 'subject').encoded,
    publicKey: readBitString(
      expectTag(spki[1], Tag.BIT_STRING, 'subjectPublicKey'),
      'subjectPublicKey',
    ),
    ocspUris: extensions ? ocspUris(explicit(extensions, 'extensions')) : [],
  };
}

function ocspUris(extensions: DerElement): string[] {
  for (const extension of children(
    expectTag(extensions, Tag.SEQUENCE, 'Extensions'),
    'Extensions',
  )) {
    const parts = children(expectTag(extension, Tag.SEQUENCE, 'Extension'), 'Extension');
    if (readOid(expectTag(parts[0], Tag.OID, 'extnID'), 'extnID') !== OID.authorityInfoAccess)
      continue;
    // extnValue is last; a `critical` BOOLEAN may come before it.
    const value = expectTag(parts[parts.length - 1], Tag.OCTET_STRING, 'extnValue');
    const descriptions = children(
      expectTag(decode(value.content, 'AuthorityInfoAccess'), Tag.SEQUENCE, 'AuthorityInfoAccess'),
      'AuthorityInfoAccess',
    );
    return descriptions.flatMap((description) => {
      const [method, location] = children(
        expectTag(description, Tag.SEQUENCE, 'AccessDescription'),
        'AccessDescription',
      );
      const isOcsp =
        readOid(expectTag(method, Tag.OID, 'accessMethod'), 'accessMethod') === OID.ocsp;
      // uniformResourceIdentifier [6] IA5String; other kinds of GeneralName are no use here.
      return isOcsp && location?.tag === contextTag(6, false)
        ? [location.content.toString('latin1')]
        : [];
    });
  }
  return [];
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
  const certId = encode(
    Tag.SEQUENCE,
    encode(Tag.SEQUENCE, encodeOid(OID.sha1), encode(Tag.NULL)),
    encode(Tag.OCTET_STRING, id.issuerNameHash),
    encode(Tag.OCTET_STRING, id.issuerKeyHash),
    encode(Tag.INTEGER, id.serialNumber),
  );
  // OCSPRequest { TBSRequest { requestList { Request { CertID } } } }; version v1 is the default.
  return encode(
    Tag.SEQUENCE,
    encode(Tag.SEQUENCE, encode(Tag.SEQUENCE, encode(Tag.SEQUENCE, certId))),
  );
}

export interface OcspStatus {
  readonly certStatus: 'good' | 'revoked' | 'unknown';
  readonly thisUpdate: Date;
  /** Absent when the responder always has newer information. */
  readonly nextUpdate: Date | undefined;
}

const RESPONSE_STATUS: Record<number, string> = {
  1: 'malformedRequest',
  2: 'internalError',
  3: 'tryLater',
  5: 'sigRequired',
  6: 'unauthorized',
};

/** The status of the certificate `id` in a DER OCSPResponse. Throws if there is none. */
export function parseOcspResponse(der: Buffer, id: CertId): OcspStatus {
  const [status, responseBytes] = children(
    expectTag(decode(der, 'OCSPResponse'), Tag.SEQUENCE, 'OCSPResponse'),
    'OCSPResponse',
  );
  const code = readSmallInteger(
    expectTag(status, Tag.ENUMERATED, 'responseStatus'),
    'responseStatus',
  );
  if (code !== 0)
    throw new Error(`the responder answered ${RESPONSE_STATUS[code] ?? `status ${code}`}`);
  const bytes = explicit(
    expectTag(responseBytes, contextTag(0, true), 'responseBytes'),
    'responseBytes',
  );
  const [type, octets] = children(expectTag(bytes, Tag.SEQUENCE, 'ResponseBytes'), 'ResponseBytes');
  const responseType = readOid(expectTag(type, Tag.OID, 'responseType'), 'responseType');
  if (responseType !== OID.ocspBasic) throw new Error(`unsupported response type ${responseType}`);
  const basic = decode(
    expectTag(octets, Tag.OCTET_STRING, 'response').content,
    'BasicOCSPResponse',
  );
  const [tbs] = children(expectTag(basic, Tag.SEQUENCE, 'BasicOCSPResponse'), 'BasicOCSPResponse');
  const data = children(expectTag(tbs, Tag.SEQUENCE, 'ResponseData'), 'ResponseData');
  // version [0], responderID, producedAt, responses: the version is usually left out.
  const at = data[0]?.tag === contextTag(0, true) ? 1 : 0;
  for (const single of children(expectTag(data[at + 2], Tag.SEQUENCE, 'responses'), 'responses')) {
    const fields = children(expectTag(single, Tag.SEQUENCE, 'SingleResponse'), 'SingleResponse');
    if (!isCertId(expectTag(fields[0], Tag.SEQUENCE, 'certID'), id)) continue;
    const next = fields[3]?.tag === contextTag(0, true) ? fields[3] : undefined;
    return {
      certStatus: readCertStatus(fields[1]),
      thisUpdate: readGeneralizedTime(
        expectTag(fields[2], Tag.GENERALIZED_TIME, 'thisUpdate'),
        'thisUpdate',
      ),
      nextUpdate:
        next &&
        readGeneralizedTime(
          expectTag(explicit(next, 'nextUpdate'), Tag.GENERALIZED_TIME, 'nextUpdate'),
          'nextUpdate',
        ),
    };
  }
  throw new Error(
    'the response has no status for this certificate (serial number or issuer differ)',
  );
}

function isCertId(element: DerElement, id: CertId): boolean {
  const [algorithm, nameHash, keyHash, serial] = children(element, 'CertID');
  const [hash] = children(expectTag(algorithm, Tag.SEQUENCE, 'hashAlgorithm'), 'hashAlgorithm');
  // Responders echo the request's CertID, so a SHA-1 one is all that can be ours.
  return (
    readOid(expectTag(hash, Tag.OID, 'hashAlgorithm'), 'hashAlgorithm') === OID.sha1 &&
    expectTag(nameHash, Tag.OCTET_STRING, 'issuerNameHash').content.equals(id.issuerNameHash) &&
    expectTag(keyHash, Tag.OCTET_STRING, 'issuerKeyHash').content.equals(id.issuerKeyHash) &&
    expectTag(serial, Tag.INTEGER, 'serialNumber').content.equals(id.serialNumber)
  );
}

function readCertStatus(element: DerElement | undefined): OcspStatus['certStatus'] {
  // good [0] IMPLICIT NULL, revoked [1] IMPLICIT RevokedInfo, unknown [2] IMPLICIT NULL.
  switch (element?.tag) {
    case contextTag(0, false):
      readNull(element, 'good');
      return 'good';
    case contextTag(1, true):
      return 'revoked';
    case contextTag(2, false):
      readNull(element, 'unknown');
      return 'unknown';
  }
  throw new Error(
    `certStatus: unexpected ${element ? `tag 0x${element.tag.toString(16)}` : 'end of SingleResponse'}`,
  );
}

/** POSTs `body` to `url` and returns the response body of a 200 answer. */
async function postOcspRequest(
  url: URL,
  body: Buffer,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<Buffer> {
  const timeout = AbortSignal.timeout(timeoutMs);
  const request = (url.protocol === 'https:' ? httpsModule() : http).request(url, {
    method: 'POST',
    agent: false, // one request now and then: no pool keeping sockets open
    signal: AbortSignal.any([signal, timeout]),
    headers: {
      'content-type': 'application/ocsp-request',
      'content-length': body.length,
      accept: 'application/ocsp-response',
    },
  });
  // The listener stays for the request's life: an abort while the body is read is also emitted
  // on the request, and an 'error' without a listener would bring the process down.
  const responded = new Promise<IncomingMessage>((resolve, reject) => {
    request.once('response', resolve);
    request.on('error', reject);
  });
  try {
    request.end(body);
    const response = await responded;
    if (response.statusCode !== 200) throw new Error(`HTTP status ${response.statusCode}`);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_RESPONSE_BYTES)
        throw new Error(`the response is larger than ${MAX_RESPONSE_BYTES / 1024} KiB`);
      chunks.push(chunk);
    }
    return Buffer.concat(chunks);
  } catch (err) {
    if (timeout.aborted) throw new Error(`no complete answer within ${timeoutMs} ms`);
    throw err;
  } finally {
    request.destroy();
  }
}

// ---- The stapler --------------------------------------------------------------------------------

export interface OcspStaplerOptions {
  /** The error log. */
  log(message: string): void;
  /** Refresh this long before nextUpdate (default: 1 hour, or half the validity if shorter). */
  refreshMarginMs?: number;
  /** Upper bound on how long a response without nextUpdate is reused (default 1 hour). */
  maxAgeMs?: number;
  /** Time limit of one fetch (default 10 s). */
  fetchTimeoutMs?: number;
}

type OcspCallback = (err: Error | null, response?: Buffer) => void;

interface Target {
  readonly url: URL;
  readonly id: CertId;
  readonly request: Buffer;
}

interface Entry {
  /** Names the certificate in log lines. */
  readonly label: string;
  /** Where and what to ask; absent for a certificate that cannot be stapled (already logged). */
  readonly target: Target | undefined;
  response?: { readonly der: Buffer; readonly expiresAt: number };
  fetching?: AbortController;
  timer?: NodeJS.Timeout;
  /** Unsuccessful answers in a row, for the back-off. */
  failures: number;
  /** The kind of trouble last logged; a streak of the same kind is logged once. */
  problem?: 'failure' | 'revoked' | 'unknown';
}

/**
 * Staples OCSP responses. Each certificate that can be stapled has, from the first time it is
 * seen until it is evicted or the stapler closed, exactly one fetch in flight or one timer
 * pending (refresh or retry): only that first sight starts a fetch, never a later handshake.
 */
export class OcspStapler {
  readonly #log: (message: string) => void;
  readonly #refreshMarginMs: number | undefined;
  readonly #maxAgeMs: number;
  readonly #fetchTimeoutMs: number;
  /** By SHA-256 fingerprint, least recently used first. */
  readonly #entries = new Map<string, Entry>();
  #closed = false;

  constructor(options: OcspStaplerOptions) {
    this.#log = (message) => options.log(`OCSP stapling: ${message}`);
    this.#refreshMarginMs = options.refreshMarginMs;
    this.#maxAgeMs = options.maxAgeMs ?? HOUR_MS;
    this.#fetchTimeoutMs = options.fetchTimeoutMs ?? 10_000;
  }

  readonly onOcspRequest = (
    certificate: Buffer,
    issuer: Buffer | null,
    callback: OcspCallback,
  ): void => {
    callback(null, this.#closed ? undefined : this.#staple(this.#entry(certificate, issuer)));
  };

  prefetch(certPem: string | Buffer): void {
    if (this.#closed) return;
    const [leaf, ...others] = pemCertificates(certPem);
    if (!leaf) return;
    const fields = tryParseCertificate(leaf);
    const issuer =
      fields && others.find((other) => tryParseCertificate(other)?.subject.equals(fields.issuer));
    // Without the issuer in this PEM, Node may still find it (in `ca`): let the handshake decide.
    if (!issuer && fields && responderUrl(fields)) return;
    this.#staple(this.#entry(leaf, issuer ?? null));
  }

  close(): void {
    this.#closed = true;
    for (const entry of this.#entries.values()) stop(entry);
    this.#entries.clear();
  }

  /** The cached response, if still valid; starts the first fetch of a certificate. */
  #staple(entry: Entry): Buffer | undefined {
    if (entry.target && !entry.fetching && !entry.timer) void this.#fetch(entry, entry.target);
    const response = entry.response;
    return response && response.expiresAt > Date.now() ? response.der : undefined;
  }

  #entry(certificate: Buffer, issuer: Buffer | null): Entry {
    const key = fingerprint(certificate);
    const known = this.#entries.get(key);
    if (known) {
      this.#entries.delete(key);
      this.#entries.set(key, known);
      return known;
    }
    const entry: Entry = { ...this.#target(certificate, key, issuer), failures: 0 };
    this.#entries.set(key, entry);
    if (this.#entries.size > MAX_ENTRIES) {
      const [oldestKey, oldest] = this.#entries.entries().next().value as [string, Entry];
      stop(oldest);
      this.#entries.delete(oldestKey);
    }
    return entry;
  }

  /** What to ask about `certificate`, or nothing (with a warning, once, when it names a responder). */
  #target(
    certificate: Buffer,
    key: string,
    issuer: Buffer | null,
  ): Pick<Entry, 'label' | 'target'> {
    const label = describe(certificate, key);
    let reason: string;
    try {
      const fields = parseCertificate(certificate);
      const url = responderUrl(fields);
      if (url && issuer) {
        const id = certIdFor(fields, parseCertificate(issuer));
        return { label, target: { url, id, request: encodeOcspRequest(id) } };
      }
      // No responder is the rule since 2025 (Let's Encrypt dropped OCSP): nothing to say then.
      if (!url) return { label, target: undefined };
      reason = 'its issuer is not in the certificate chain';
    } catch (err) {
      reason = `it cannot be read (${message(err)})`;
    }
    this.#log(`${label} is served without stapling: ${reason}`);
    return { label, target: undefined };
  }

  async #fetch(entry: Entry, target: Target): Promise<void> {
    const controller = new AbortController();
    entry.fetching = controller;
    let delay: number;
    try {
      const der = await postOcspRequest(
        target.url,
        target.request,
        this.#fetchTimeoutMs,
        controller.signal,
      );
      delay = this.#accept(entry, target, der, parseOcspResponse(der, target.id));
    } catch (err) {
      if (controller.signal.aborted) return; // closed or evicted: not a failure to report
      delay = this.#fail(
        entry,
        'failure',
        `could not get the status of ${entry.label} from ${target.url.href}: ${message(err)}`,
      );
    } finally {
      entry.fetching = undefined;
    }
    if (controller.signal.aborted) return;
    entry.timer = setTimeout(
      () => {
        entry.timer = undefined;
        void this.#fetch(entry, target);
      },
      Math.min(delay, MAX_TIMER_MS),
    ).unref();
  }

  /** Takes an answer; returns how long until the next fetch. */
  #accept(entry: Entry, target: Target, der: Buffer, status: OcspStatus): number {
    if (status.certStatus !== 'good') {
      // An older `good` response must not be stapled once the responder says otherwise.
      entry.response = undefined;
      return this.#fail(
        entry,
        status.certStatus,
        `${entry.label} is ${status.certStatus.toUpperCase()} according to ${target.url.href}; it is served without stapling`,
      );
    }
    const now = Date.now();
    const expiresAt = status.nextUpdate?.getTime() ?? now + this.#maxAgeMs;
    if (expiresAt <= now) {
      return this.#fail(
        entry,
        'failure',
        `${target.url.href} sent a response for ${entry.label} that expired at ${new Date(expiresAt).toISOString()}`,
      );
    }
    if (entry.problem)
      this.#log(`${entry.label} is stapled again: ${target.url.href} answered "good"`);
    entry.problem = undefined;
    entry.failures = 0;
    entry.response = { der, expiresAt };
    const validFrom = status.nextUpdate ? status.thisUpdate.getTime() : now;
    const margin = this.#refreshMarginMs ?? Math.min(HOUR_MS, (expiresAt - validFrom) / 2);
    const wait = expiresAt - margin - now;
    // Due (almost) at once means the responder has nothing fresher yet: asking again right away
    // would only hammer it, so wait as after a failure.
    return wait >= 1000 ? wait : RETRY_FIRST_MS;
  }

  /** Counts an unsuccessful answer, logs the first of a streak; returns the back-off. */
  #fail(entry: Entry, problem: NonNullable<Entry['problem']>, text: string): number {
    entry.failures += 1;
    const delay = Math.min(RETRY_FIRST_MS * 2 ** (entry.failures - 1), HOUR_MS);
    if (entry.problem !== problem)
      this.#log(`${text}; asking again in ${delay / 60_000} min, then less often`);
    entry.problem = problem;
    return delay;
  }
}

function stop(entry: Entry): void {
  clearTimeout(entry.timer);
  entry.fetching?.abort();
}

function tryParseCertificate(der: Buffer): CertificateFields | undefined {
  try {
    return parseCertificate(der);
  } catch {
    return undefined;
  }
}

const fingerprint = (certificate: Buffer): string =>
  createHash('sha256').update(certificate).digest('hex');

/** `certificate "CN=…" (SHA-256 0123456789abcdef…)`, for log lines. */
function describe(certificate: Buffer, key: string): string {
  let subject: string;
  try {
    subject = new X509Certificate(certificate).subject.replaceAll('\n', ', ');
  } catch {
    subject = 'unreadable';
  }
  return `certificate "${subject}" (SHA-256 ${key.slice(0, 16)}…)`;
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
