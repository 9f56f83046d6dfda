// TLS settings → what Node's TLS servers take: the policy (versions, cipher suites, curves, client
// certificates) and the certificates, chosen per handshake by SNI (exact names first, then the
// longest `*.example.com` wildcard, then the global `cert`/`key`). Built once per configuration;
// a reload swaps the whole selection into the running listener.
import { readFileSync } from 'node:fs';
import type { SecureContext, SecureContextOptions } from 'node:tls';
import { tlsModule } from './lazy-modules.js';
import type { ResolvedSettings } from '../config/defaults.js';
import { REDACTED } from '../config/redact.js';
import { findCurve } from '../config/tls-names.js';
import { cipherOptions, DEFAULT_CIPHER_SUITES } from './cipher-suites.js';

export interface KeyPair {
  readonly cert: Buffer;
  readonly key: Buffer;
}

/**
 * Reads a certificate (with its chain) and key; the message names the file that failed, except
 * that a key's path is sensitive, as in /config (the position or the certificate names the pair).
 */
export function readKeyPair(certPath: string, keyPath: string): KeyPair {
  return { cert: readPem(certPath, 'certificate'), key: readPem(keyPath, 'private key', REDACTED) };
}

export function readPem(path: string, what: string, shownAs = path): Buffer {
  let data: Buffer;
  try {
    data = readFileSync(path);
  } catch (e) {
    throw new Error(
      `cannot read the ${what} ${shownAs}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  if (!data.includes('-----BEGIN ')) throw new Error(`${shownAs} is not a PEM ${what}`);
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
): SecureContext {
  try {
    return tlsModule().createSecureContext({ ...policy, cert: pair.cert, key: pair.key });
  } catch (e) {
    const reason = (e as Error).message;
    throw new Error(
      /mismatch/i.test(reason)
        ? `the private key ${REDACTED} does not belong to the certificate ${certPath}`
        : `${certPath} (and its key): ${reason}`,
    );
  }
}

export interface CertificateSet {
  /** The global cert/key's context, when there is one. */
  readonly fallback: SecureContext | undefined;
  /** The global cert/key themselves: the server's default for clients that send no SNI. */
  readonly fallbackPair: KeyPair | undefined;
  /** Every certificate chain, for OCSP prefetching. */
  readonly chains: readonly Buffer[];
  /** The context for a server name (SNI), or the fallback. */
  select(servername: string): SecureContext | undefined;
}

/** All certificates of a configuration, read and checked now (startup, reload, validation). */
export function loadCertificates(g: ResolvedSettings): CertificateSet {
  const policy = policyOptions(g);
  const chains: Buffer[] = [];
  const load = (certPath: string, keyPath: string) => {
    const pair = readKeyPair(certPath, keyPath);
    chains.push(pair.cert);
    return { pair, context: contextFor(policy, pair, certPath) };
  };
  const global = g.cert !== undefined && g.key !== undefined ? load(g.cert, g.key) : undefined;
  const fallback = global?.context;
  const exact = new Map<string, SecureContext>();
  const wildcards = new Map<string, SecureContext>();
  for (const [name, { cert, key }] of Object.entries(g.sni ?? {})) {
    const lower = name.toLowerCase();
    const { context } = load(cert, key);
    if (lower.startsWith('*.')) wildcards.set(lower.slice(2), context);
    else exact.set(lower, context);
  }
  return {
    fallback,
    fallbackPair: global?.pair,
    chains,
    select(servername) {
      const name = servername.toLowerCase();
      const found = exact.get(name);
      if (found) return found;
      // `*.example.com` covers example.com and any name below it; the longest suffix wins.
      for (let rest = name; ;) {
        const w = wildcards.get(rest);
        if (w) return w;
        const dot = rest.indexOf('.');
        if (dot < 0) return fallback;
        rest = rest.slice(dot + 1);
      }
    },
  };
}
