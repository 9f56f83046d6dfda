// TLS settings → what Node's TLS servers take: the policy (versions, cipher suites, curves, client
// certificates) and the certificates, chosen per handshake by the server name (loadCertificates
// says in which order). Built once per configuration; a reload swaps the whole selection into the
// running listener.
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { SecureContext, SecureContextOptions } from 'node:tls';
import { tlsModule } from './lazy-modules.js';
import type { ResolvedSettings } from '../config/defaults.js';
import { findCurve } from '../config/tls-names.js';
import { cipherOptions, DEFAULT_CIPHER_SUITES } from './cipher-suites.js';
import { inWords } from '../config/system-errors.js';

export interface KeyPair {
  readonly cert: Buffer;
  readonly key: Buffer;
}

/** Reads a certificate (with its chain) and key; the message names the file that failed. */
export function readKeyPair(certPath: string, keyPath: string): KeyPair {
  return { cert: readPem(certPath, 'certificate'), key: readPem(keyPath, 'private key') };
}

export function readPem(path: string, what: string): Buffer {
  let data: Buffer;
  try {
    data = readFileSync(path);
  } catch (e) {
    throw new Error(`cannot read the ${what} ${path}: ${inWords(e)}`);
  }
  if (!data.includes('-----BEGIN ')) throw new Error(`${path} is not a PEM ${what}`);
  return data;
}

/** The policy part of every context: versions, suites, curves, and the client CA. */
export function policyOptions(g: ResolvedSettings): SecureContextOptions {
  const suites = g.cipherSuite && g.cipherSuite.length > 0 ? g.cipherSuite : DEFAULT_CIPHER_SUITES;
  const options: SecureContextOptions = {
    minVersion: g.tlsMinVersion,
    maxVersion: g.tlsMaxVersion,
    ...cipherOptions(suites),
  };
  if (g.ecdhCurve && g.ecdhCurve.length > 0)
    options.ecdhCurve = g.ecdhCurve.map((c) => findCurve(c)!).join(':');
  // Without clientCertificateCA, client certificates are checked against Node's trust store (plus
  // NODE_EXTRA_CA_CERTS), as Ferron checks them against the OS store (CONTRACT.md).
  if (g.useClientCertificate && g.clientCertificateCA !== undefined)
    options.ca = readPem(g.clientCertificateCA, 'client CA bundle');
  return options;
}

/** A context for one key pair under the policy; a key that does not match is an error naming the certificate. */
export function contextFor(
  policy: SecureContextOptions,
  pair: KeyPair,
  certPath: string,
  keyPath: string,
): SecureContext {
  try {
    return tlsModule().createSecureContext({ ...policy, cert: pair.cert, key: pair.key });
  } catch (e) {
    const reason = (e as Error).message;
    throw new Error(
      /mismatch/i.test(reason)
        ? `the private key ${keyPath} does not belong to the certificate ${certPath}`
        : `${certPath} (and its key ${keyPath}): ${reason}`,
    );
  }
}

export interface CertificateSet {
  /**
   * The certificate for clients that name no server (or a name nothing covers): the global
   * `cert`/`key`, else the first `sni` certificate.
   */
  readonly fallback: KeyPair | undefined;
  /** Every certificate, the fallback included: each listener makes one context per pair. */
  readonly pairs: readonly KeyPair[];
  /**
   * Automatic TLS: certificates come and go while the server runs (`select` reads the current
   * ones), and there is no fallback: a name without a certificate fails its handshake.
   */
  readonly managed?: boolean;
  /** The certificate for a server name; the fallback when nothing covers it. */
  select(servername: string): KeyPair | undefined;
}

/** Certificates by name: exact names, and `*.example.com` wildcards by the suffix they cover. */
class NameTable {
  private readonly exact = new Map<string, KeyPair>();
  private readonly wildcards = new Map<string, KeyPair>();

  /** The first certificate added for a name keeps it. */
  add(name: string, pair: KeyPair): void {
    const lower = name.toLowerCase();
    const [table, key] = lower.startsWith('*.')
      ? [this.wildcards, lower.slice(2)]
      : [this.exact, lower];
    if (!table.has(key)) table.set(key, pair);
  }

  exactly(name: string): KeyPair | undefined {
    return this.exact.get(name);
  }

  /** `*.example.com` covers example.com and any name below it; the longest suffix wins. */
  byWildcard(name: string): KeyPair | undefined {
    for (let rest = name; ;) {
      const w = this.wildcards.get(rest);
      if (w) return w;
      const dot = rest.indexOf('.');
      if (dot < 0) return undefined;
      rest = rest.slice(dot + 1);
    }
  }
}

/** The DNS names a certificate's subjectAltName lists. */
export function dnsNamesOf(cert: X509Certificate): string[] {
  return (cert.subjectAltName ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.startsWith('DNS:'))
    .map((entry) => entry.slice(4).toLowerCase());
}

/**
 * All certificates of a configuration, read and checked now (startup, reload, validation). A name
 * gets, in order: its `sni` entry, a certificate whose subjectAltName lists it (as Caddy chooses),
 * an `sni` wildcard, a certificate whose subjectAltName covers it by wildcard, the fallback.
 */
export function loadCertificates(g: ResolvedSettings): CertificateSet {
  const policy = policyOptions(g);
  const pairs: KeyPair[] = [];
  const configured = new NameTable();
  const covered = new NameTable();
  const load = (certPath: string, keyPath: string): KeyPair => {
    const pair = readKeyPair(certPath, keyPath);
    // Checked, not kept: each listener makes its own context per certificate (ProtocolServer).
    contextFor(policy, pair, certPath, keyPath);
    for (const name of dnsNamesOf(new X509Certificate(pair.cert))) covered.add(name, pair);
    pairs.push(pair);
    return pair;
  };
  const global = g.cert !== undefined && g.key !== undefined ? load(g.cert, g.key) : undefined;
  let first: KeyPair | undefined;
  for (const [name, { cert, key }] of Object.entries(g.sni ?? {})) {
    const pair = load(cert, key);
    first ??= pair;
    configured.add(name, pair);
  }
  const fallback = global ?? first;
  return {
    fallback,
    pairs,
    select(servername) {
      const name = servername.toLowerCase();
      return (
        configured.exactly(name) ??
        covered.exactly(name) ??
        configured.byWildcard(name) ??
        covered.byWildcard(name) ??
        fallback
      );
    },
  };
}
