// TLS settings → what Node's TLS servers take: the policy (versions, cipher suites, curves, client
// certificates) and the certificates, chosen per handshake by the server name (loadCertificates
// says in which order). Built once per configuration; a reload swaps the whole selection into the
// running listener.
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { SecureContextOptions } from 'node:tls';
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

/**
 * Checks a certificate chain and its key without making a TLS context (each listener makes the
 * one context a certificate needs, once per certificate per reload). Every
 * certificate of the chain must parse and the key must belong to the first; returns the first.
 */
export function checkKeyPair(pair: KeyPair, certPath: string, keyPath: string): X509Certificate {
  const blocks = pair.cert
    .toString('latin1')
    .match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g);
  if (blocks === null) throw new Error(`${certPath} holds no PEM certificate`);
  let chain: X509Certificate[];
  try {
    chain = blocks.map((block) => new X509Certificate(block));
  } catch (e) {
    throw new Error(`${certPath}: ${(e as Error).message}`);
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(pair.key);
  } catch (e) {
    throw new Error(`${keyPath} (the key of ${certPath}): ${(e as Error).message}`);
  }
  if (!chain[0]!.checkPrivateKey(key))
    throw new Error(`the private key ${keyPath} does not belong to the certificate ${certPath}`);
  return chain[0]!;
}

/** Checks the policy (suites, curves, the client CA) by making one context of it alone. */
export function checkPolicy(policy: SecureContextOptions): void {
  tlsModule().createSecureContext(policy);
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
  const pairs: KeyPair[] = [];
  const configured = new NameTable();
  const covered = new NameTable();
  const load = (certPath: string, keyPath: string): KeyPair => {
    const pair = readKeyPair(certPath, keyPath);
    for (const name of dnsNamesOf(checkKeyPair(pair, certPath, keyPath))) covered.add(name, pair);
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
