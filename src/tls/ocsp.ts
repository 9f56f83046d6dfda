// OCSP stapling (RFC 6066 status_request). A handshake is answered at once from a cache keyed by
// certificate fingerprint; responses are fetched from the responder named in the certificate's
// Authority Information Access extension, in the background, and refreshed before their
// nextUpdate. The responder's signature is not verified here: the client does that.
//
// Only a `good` status is stapled. A `revoked` or `unknown` answer is logged and the certificate
// is served without a staple (as nginx does): a stapled "revoked" would make strict clients
// refuse the site outright, while without a staple they fall back to their own checks. The
// operator learns of it from the log and has to replace the certificate either way.
//
// With worker processes the primary's stapler fetches and publishes each response; the workers'
// staplers only follow (`tellFetcher`), so the responder is asked once for the server.

import { createHash, X509Certificate } from 'node:crypto';
import {
  certIdFor,
  encodeOcspRequest,
  parseCertificate,
  parseOcspResponse,
  pemCertificates,
  responderUrl,
  type CertId,
  type CertificateFields,
  type OcspStatus,
} from './ocsp-codec.js';
import { postOcspRequest } from './ocsp-fetch.js';

const HOUR_MS = 3_600_000;
/** The first retry after a failure; each further failure doubles it, up to an hour. */
const RETRY_FIRST_MS = 60_000;
const MAX_ENTRIES = 1000;
/** setTimeout fires at once for longer delays, so long-lived responses are refreshed this soon. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A response as it is stapled: its DER, and when it stops being served. */
export interface Staple {
  readonly der: Buffer;
  readonly expiresAt: number;
}

/** A staple a fetching stapler took, or withdrew (undefined), for the followers. */
export interface StapleEvent {
  /** The certificate's SHA-256 fingerprint, in hex. */
  readonly fingerprint: string;
  readonly staple: Staple | undefined;
}

export interface OcspStaplerOptions {
  /** The error log. */
  log(message: string): void;
  /** Told of each response taken, and of one withdrawn after a bad answer. */
  publish?: (event: StapleEvent) => void;
  /**
   * Set when another process fetches (a worker's primary): this stapler then never fetches nor
   * prefetches, staples what `staple` gives it, and tells the fetcher of each certificate a
   * handshake first shows it (the certificates ACME obtained, issuers only Node found).
   */
  tellFetcher?: (certificate: Buffer, issuer: Buffer | null) => void;
  /** Refresh this long before nextUpdate (default: 1 hour, or half the validity if shorter). */
  refreshMarginMs?: number;
  /** Upper bound on how long a response without nextUpdate is reused (default 1 hour). */
  maxAgeMs?: number;
  /** Time limit of one fetch (default 10 s). */
  fetchTimeoutMs?: number;
}

/** A follower's entry: it fetches nothing, so it never names the certificate in the log. */
const FOLLOWED = { label: '', target: undefined } as const;

type OcspCallback = (err: Error | null, response?: Buffer) => void;

interface Target {
  readonly url: URL;
  readonly id: CertId;
  readonly request: Buffer;
}

interface Entry {
  readonly fingerprint: string;
  /** Names the certificate in log lines. */
  readonly label: string;
  /** Where and what to ask; absent for a certificate that cannot be stapled (already logged). */
  readonly target: Target | undefined;
  response?: Staple;
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
  readonly #publish: OcspStaplerOptions['publish'];
  readonly #tellFetcher: OcspStaplerOptions['tellFetcher'];
  /** By SHA-256 fingerprint, least recently used first. */
  readonly #entries = new Map<string, Entry>();
  #closed = false;

  constructor(options: OcspStaplerOptions) {
    this.#log = (message) => options.log(`OCSP stapling: ${message}`);
    this.#refreshMarginMs = options.refreshMarginMs;
    this.#maxAgeMs = options.maxAgeMs ?? HOUR_MS;
    this.#fetchTimeoutMs = options.fetchTimeoutMs ?? 10_000;
    this.#publish = options.publish;
    this.#tellFetcher = options.tellFetcher;
  }

  readonly onOcspRequest = (
    certificate: Buffer,
    issuer: Buffer | null,
    callback: OcspCallback,
  ): void => {
    callback(null, this.#closed ? undefined : this.#staple(this.#shown(certificate, issuer))?.der);
  };

  prefetch(certPem: string | Buffer): void {
    // A follower's fetcher prefetches.
    if (this.#closed || this.#tellFetcher) return;
    const [leaf, ...others] = pemCertificates(certPem);
    if (!leaf) return;
    const fields = tryParseCertificate(leaf);
    const issuer =
      fields && others.find((other) => tryParseCertificate(other)?.subject.equals(fields.issuer));
    // Without the issuer in this PEM, Node may still find it (in `ca`): let the handshake decide.
    if (!issuer && fields && responderUrl(fields)) return;
    this.#staple(this.#shown(leaf, issuer ?? null));
  }

  /**
   * A certificate a follower's handshake showed first: fetched for as if shown here. A staple
   * held already is published again, since that follower may have let its own go (its bound).
   */
  shownByFollower(certificate: Buffer, issuer: Buffer | null): void {
    if (this.#closed) return;
    const entry = this.#shown(certificate, issuer);
    const staple = this.#staple(entry);
    if (staple) this.#publish?.({ fingerprint: entry.fingerprint, staple });
  }

  /** A follower takes what its fetcher published. */
  staple(event: StapleEvent): void {
    if (this.#closed) return;
    this.#entry(event.fingerprint, () => FOLLOWED).response = event.staple;
  }

  /** Every staple still valid, for a follower that starts now. */
  current(): StapleEvent[] {
    const now = Date.now();
    return [...this.#entries.values()].flatMap(({ fingerprint, response }) =>
      response && response.expiresAt > now ? [{ fingerprint, staple: response }] : [],
    );
  }

  close(): void {
    this.#closed = true;
    for (const entry of this.#entries.values()) stop(entry);
    this.#entries.clear();
  }

  /** The cached response, if still valid; starts the first fetch of a certificate. */
  #staple(entry: Entry): Staple | undefined {
    if (entry.target && !entry.fetching && !entry.timer) void this.#fetch(entry, entry.target);
    const response = entry.response;
    return response && response.expiresAt > Date.now() ? response : undefined;
  }

  /** The entry of a certificate shown by a handshake or a prefetch; a follower tells its fetcher. */
  #shown(certificate: Buffer, issuer: Buffer | null): Entry {
    const key = fingerprint(certificate);
    return this.#entry(key, () => {
      if (!this.#tellFetcher) return this.#target(certificate, key, issuer);
      this.#tellFetcher(certificate, issuer);
      return FOLLOWED;
    });
  }

  /** The entry of `key`, made by `make` when there is none, as the most recently used. */
  #entry(key: string, make: () => Pick<Entry, 'label' | 'target'>): Entry {
    const known = this.#entries.get(key);
    if (known) {
      this.#entries.delete(key);
      this.#entries.set(key, known);
      return known;
    }
    const entry: Entry = { fingerprint: key, ...make(), failures: 0 };
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
      if (entry.response) this.#take(entry, undefined);
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
    this.#take(entry, { der, expiresAt });
    const validFrom = status.nextUpdate ? status.thisUpdate.getTime() : now;
    const margin = this.#refreshMarginMs ?? Math.min(HOUR_MS, (expiresAt - validFrom) / 2);
    const wait = expiresAt - margin - now;
    // Due (almost) at once means the responder has nothing fresher yet: asking again right away
    // would only hammer it, so wait as after a failure.
    return wait >= 1000 ? wait : RETRY_FIRST_MS;
  }

  #take(entry: Entry, staple: Staple | undefined): void {
    entry.response = staple;
    this.#publish?.({ fingerprint: entry.fingerprint, staple });
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
