// Automatic TLS (ACME, RFC 8555): one certificate per name, as Caddy orders them, so that a name
// failing validation never holds the others back. Certificates found in the store are used at
// once; missing or expiring ones are ordered in the background while the server runs; a renewal is
// due when a third of the lifetime remains; failures are logged and retried with exponential
// back-off. The handshake reads `pairFor` each time, so a new certificate is served by the next
// handshake with no listener restarted. Challenges: TLS-ALPN-01 (RFC 8737) by default, answered by
// the HTTPS listener; HTTP-01 with useAutomaticTLSHTTPChallenge, answered by the request handler.
// With worker processes the primary orders and publishes each challenge and certificate; the
// workers' managers only follow (`orders: false`), so a name is ordered once for the server.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import type { CertificateSet, KeyPair } from './certificates.js';
import { AcmeStore } from './acme-store.js';

type AcmeClient = typeof import('acme-client');

export type ChallengeType = 'tls-alpn-01' | 'http-01';

export interface AcmeOptions {
  readonly directoryUrl: string;
  /** The store's root folder (automaticTLSContactCacheDirectory or the per-user default). */
  readonly storageRoot: string;
  readonly log: (message: string) => void;
  /** False: orders are placed elsewhere, and `follow` takes what they bring. Default true. */
  readonly orders?: boolean;
  /** Told of every challenge answer and certificate before the CA or a client may need it. */
  readonly publish?: (event: AcmeEvent) => Promise<void>;
}

/** A change an ordering manager publishes, for the managers that follow it. */
export type AcmeEvent =
  | { readonly kind: 'http-01'; readonly token: string; readonly answer: string | undefined }
  | { readonly kind: 'tls-alpn-01'; readonly name: string; readonly pair: KeyPair | undefined }
  | { readonly kind: 'certificate'; readonly name: string; readonly pair: KeyPair };

export interface AcmeSettings {
  readonly email: string | undefined;
  readonly challenge: ChallengeType;
}

/** What /status shows of a managed name. */
export interface ManagedStatus {
  readonly name: string;
  readonly state: 'valid' | 'ordering' | 'waiting';
  readonly expires: string | null;
  readonly renews: string | null;
  readonly error?: string;
}

interface Managed {
  pair: KeyPair | undefined;
  notAfter: number | undefined;
  renewAt: number | undefined;
  timer: NodeJS.Timeout | undefined;
  ordering: boolean;
  failures: number;
  lastError: string | undefined;
}

/** The first retry after a failed order; each further failure doubles it, up to six hours. */
const RETRY_FIRST_MS = 60_000;
const RETRY_MAX_MS = 6 * 3_600_000;
/** setTimeout fires at once for longer delays; a far renewal is re-checked this often. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Orders run one at a time: a reload that adds fifty names does not open fifty orders at once. */
const ORDERS_AT_ONCE = 1;

export class AcmeManager {
  private readonly store: AcmeStore;
  private readonly names = new Map<string, Managed>();
  private settings: AcmeSettings = { email: undefined, challenge: 'tls-alpn-01' };
  private client: Promise<InstanceType<AcmeClient['Client']>> | undefined;
  private acme: Promise<AcmeClient> | undefined;
  private readonly queue: string[] = [];
  private running = 0;
  private closed = false;
  /** HTTP-01: key authorizations by token. */
  private readonly tokens = new Map<string, string>();
  /** TLS-ALPN-01: the validation certificate by name. */
  private readonly alpnPairs = new Map<string, KeyPair>();

  constructor(private readonly options: AcmeOptions) {
    this.store = new AcmeStore(options.storageRoot, options.directoryUrl);
  }

  get directory(): string {
    return this.store.directory;
  }

  /** The certificates as the listeners read them: always the current ones. */
  readonly certificates: CertificateSet = {
    managed: true,
    fallback: undefined,
    // None up front: a listener makes each certificate's context at its first handshake.
    get pairs() {
      return [];
    },
    select: (name) => this.pairFor(name),
  };

  pairFor(name: string): KeyPair | undefined {
    return this.names.get(name.toLowerCase())?.pair;
  }

  /** TLS-ALPN-01: the validation certificate for a name being validated. */
  challengeFor(name: string): KeyPair | undefined {
    return this.alpnPairs.get(name.toLowerCase());
  }

  /** HTTP-01: the body for `/.well-known/acme-challenge/TOKEN`. */
  keyAuthorization(token: string): string | undefined {
    return this.tokens.get(token);
  }

  /** Takes what an ordering manager published (a follower's only source besides the store). */
  follow(event: AcmeEvent): void {
    if (event.kind === 'http-01') {
      if (event.answer === undefined) this.tokens.delete(event.token);
      else this.tokens.set(event.token, event.answer);
    } else if (event.kind === 'tls-alpn-01') {
      if (event.pair === undefined) this.alpnPairs.delete(event.name);
      else this.alpnPairs.set(event.name, event.pair);
    } else {
      const managed = this.names.get(event.name);
      if (managed !== undefined) this.use(event.name, managed, event.pair);
    }
  }

  /** Every certificate held and challenge under way, for a follower that starts now. */
  current(): AcmeEvent[] {
    const held = [...this.names].flatMap(([name, m]) =>
      m.pair ? [{ kind: 'certificate' as const, name, pair: m.pair }] : [],
    );
    return [
      ...held,
      ...[...this.tokens].map(([token, answer]) => ({ kind: 'http-01' as const, token, answer })),
      ...[...this.alpnPairs].map(([name, pair]) => ({ kind: 'tls-alpn-01' as const, name, pair })),
    ];
  }

  /** The names to hold certificates for (a reload may add and remove some). */
  manage(names: readonly string[], settings: AcmeSettings): void {
    this.settings = settings;
    const wanted = new Set(names.map((n) => n.toLowerCase()));
    for (const [name, managed] of this.names) {
      if (wanted.has(name)) continue;
      clearTimeout(managed.timer);
      this.names.delete(name);
    }
    for (const name of wanted) {
      if (this.names.has(name)) continue;
      const managed: Managed = {
        pair: undefined,
        notAfter: undefined,
        renewAt: undefined,
        timer: undefined,
        ordering: false,
        failures: 0,
        lastError: undefined,
      };
      this.names.set(name, managed);
      void this.loadStored(name, managed);
    }
  }

  status(): ManagedStatus[] {
    return [...this.names].map(([name, m]) => ({
      name,
      state: m.ordering ? 'ordering' : m.pair ? 'valid' : 'waiting',
      expires: m.notAfter === undefined ? null : new Date(m.notAfter).toISOString(),
      renews: m.renewAt === undefined ? null : new Date(m.renewAt).toISOString(),
      ...(m.lastError === undefined ? {} : { error: m.lastError }),
    }));
  }

  close(): void {
    this.closed = true;
    for (const managed of this.names.values()) clearTimeout(managed.timer);
    this.names.clear();
    this.queue.length = 0;
  }

  private log(message: string): void {
    this.options.log(`automatic TLS: ${message}`);
  }

  /** A stored certificate is used at once; a missing, unusable or expiring one is ordered. */
  private async loadStored(name: string, managed: Managed): Promise<void> {
    const found = await this.store.certificate(name);
    if (this.names.get(name) !== managed) return;
    // A follower serves what the store holds; the orderer says what it does with it.
    if (this.options.orders === false) {
      if (found.kind === 'found' && managed.pair === undefined) this.use(name, managed, found.pair);
      return;
    }
    if (found.kind === 'unusable')
      this.log(
        `${name}: the stored certificate cannot be read (${found.reason}); ordering a new one`,
      );
    if (found.kind === 'found') {
      const problem = this.use(name, managed, found.pair);
      if (problem === undefined) {
        this.log(
          `${name}: using the stored certificate, valid until ${new Date(managed.notAfter!).toISOString()}`,
        );
        return this.schedule(name, managed, managed.renewAt!);
      }
      this.log(`${name}: the stored certificate is not usable (${problem}); ordering a new one`);
    }
    this.enqueue(name);
  }

  /** Takes a pair into service; a reason when it cannot serve (corrupt, wrong name, expired). */
  private use(name: string, managed: Managed, pair: KeyPair): string | undefined {
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(pair.cert);
      if (!cert.checkPrivateKey(createPrivateKey(pair.key))) return 'the key does not belong to it';
    } catch (e) {
      return (e as Error).message;
    }
    if (cert.checkHost(name) === undefined) return `it does not cover ${name}`;
    const notBefore = Date.parse(cert.validFrom);
    const notAfter = Date.parse(cert.validTo);
    if (notAfter <= Date.now()) return `it expired on ${new Date(notAfter).toISOString()}`;
    managed.pair = pair;
    managed.notAfter = notAfter;
    // Renewal when a third of the lifetime remains (Caddy, certbot and Ferron's rustls-acme).
    managed.renewAt = notAfter - (notAfter - notBefore) / 3;
    return undefined;
  }

  private schedule(name: string, managed: Managed, at: number): void {
    clearTimeout(managed.timer);
    const delay = at - Date.now();
    if (delay <= 0) return this.enqueue(name);
    managed.timer = setTimeout(
      () => (at - Date.now() <= 0 ? this.enqueue(name) : this.schedule(name, managed, at)),
      Math.min(delay, MAX_TIMER_MS),
    );
    managed.timer.unref();
  }

  private enqueue(name: string): void {
    if (this.closed || this.queue.includes(name)) return;
    this.queue.push(name);
    this.pump();
  }

  private pump(): void {
    while (this.running < ORDERS_AT_ONCE && this.queue.length > 0) {
      const name = this.queue.shift()!;
      const managed = this.names.get(name);
      if (managed === undefined) continue;
      this.running++;
      managed.ordering = true;
      void this.order(name, managed).finally(() => {
        managed.ordering = false;
        this.running--;
        this.pump();
      });
    }
  }

  private async order(name: string, managed: Managed): Promise<void> {
    const renewing = managed.pair !== undefined;
    this.log(`${name}: ${renewing ? 'renewing the certificate' : 'ordering a certificate'}`);
    try {
      const acme = await this.library();
      const client = await this.account();
      const [key, csr] = await acme.crypto.createCsr(
        { commonName: name, altNames: [name] },
        await acme.crypto.createPrivateEcdsaKey('P-256'),
      );
      const challenge = this.settings.challenge;
      const chain = await client.auto({
        csr,
        ...(this.settings.email ? { email: this.settings.email } : {}),
        termsOfServiceAgreed: true,
        challengePriority: [challenge],
        // The CA validates; a check from here would resolve the name through this machine's DNS.
        skipChallengeVerification: true,
        challengeCreateFn: async (authz, ch, keyAuthorization) => {
          const name = authz.identifier.value.toLowerCase();
          if (ch.type === 'http-01')
            return this.change({ kind: 'http-01', token: ch.token, answer: keyAuthorization });
          const [alpnKey, alpnCert] = await acme.crypto.createAlpnCertificate(
            authz,
            keyAuthorization,
          );
          await this.change({ kind: 'tls-alpn-01', name, pair: { cert: alpnCert, key: alpnKey } });
        },
        challengeRemoveFn: async (authz, ch) => {
          const name = authz.identifier.value.toLowerCase();
          if (ch.type === 'http-01')
            await this.change({ kind: 'http-01', token: ch.token, answer: undefined });
          else await this.change({ kind: 'tls-alpn-01', name, pair: undefined });
        },
      });
      if (this.closed || this.names.get(name) !== managed) return;
      const pair = { cert: Buffer.from(chain), key };
      const problem = this.use(name, managed, pair);
      if (problem !== undefined) throw new Error(`the CA's certificate is not usable: ${problem}`);
      await this.store.saveCertificate(name, pair);
      await this.options.publish?.({ kind: 'certificate', name, pair });
      managed.failures = 0;
      managed.lastError = undefined;
      this.log(
        `${name}: certificate ${renewing ? 'renewed' : 'obtained'}, valid until ${new Date(managed.notAfter!).toISOString()}, renewal from ${new Date(managed.renewAt!).toISOString()}`,
      );
      this.schedule(name, managed, managed.renewAt!);
    } catch (e) {
      if (this.closed || this.names.get(name) !== managed) return;
      managed.failures++;
      managed.lastError = (e as Error).message;
      const delay = Math.min(RETRY_FIRST_MS * 2 ** (managed.failures - 1), RETRY_MAX_MS);
      this.log(
        `${name}: the order failed (${managed.lastError}); next attempt in ${Math.round(delay / 1000)} s`,
      );
      this.schedule(name, managed, Date.now() + delay);
    }
  }

  /** A challenge answer set or removed here, and known to every follower before it returns. */
  private async change(event: AcmeEvent): Promise<void> {
    this.follow(event);
    await this.options.publish?.(event);
  }

  private library(): Promise<AcmeClient> {
    // acme-client (and axios under it) load only when automatic TLS is on.
    this.acme ??= import('acme-client').then((m) => (m.default ?? m) as AcmeClient);
    return this.acme;
  }

  /** The ACME client with the stored account key, made and stored once when there is none. */
  private account(): Promise<InstanceType<AcmeClient['Client']>> {
    this.client ??= (async () => {
      const acme = await this.library();
      let key = await this.store.accountKey((reason) =>
        this.log(`${reason}; a new account key is made`),
      );
      if (key === undefined) {
        key = await acme.crypto.createPrivateEcdsaKey('P-256');
        await this.store.saveAccountKey(key);
        this.log(`a new ACME account key is stored in ${this.store.directory}`);
      }
      const client = new acme.Client({ directoryUrl: this.options.directoryUrl, accountKey: key });
      // Registered here rather than in auto(): for a key the CA already knows, acme-client follows
      // with an update holding only termsOfServiceAgreed, which a strict CA refuses as empty. The
      // account's URL is known by then, and that is all the orders need.
      const email = this.settings.email;
      try {
        await client.createAccount({
          termsOfServiceAgreed: true,
          ...(email ? { contact: [`mailto:${email}`] } : {}),
        });
      } catch (e) {
        if (!hasAccountUrl(client)) throw e;
      }
      return client;
    })().catch((e: unknown) => {
      this.client = undefined;
      throw e;
    });
    return this.client;
  }
}

function hasAccountUrl(client: { getAccountUrl(): string }): boolean {
  try {
    return client.getAccountUrl() !== '';
  } catch {
    return false;
  }
}
