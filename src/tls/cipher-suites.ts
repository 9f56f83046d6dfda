// The `cipherSuite` names translated into the options of Node's `tls.createSecureContext`.
import type { SecureContextOptions } from 'node:tls';
import { findCipherSuite } from '../config/tls-names.js';

// Node's `ciphers` option is split by Node itself (node:internal/tls/secure-context, checked on
// Node 20.20): entries starting with `TLS_` go to SSL_CTX_set_ciphersuites (TLS 1.3), the rest to
// SSL_CTX_set_cipher_list (TLS 1.2). There is no `ciphersuites` option; a `ciphersuites` key is
// silently ignored and TLS 1.3 keeps all its default suites. Hence one `ciphers` string holding
// TLS 1.3 suites by IANA name and TLS 1.2 suites by OpenSSL name. Passing a TLS 1.2 suite by its
// IANA name would go wrong quietly: it starts with `TLS_`, so Node hands it to the TLS 1.3 list,
// OpenSSL accepts it there without error, and with no TLS 1.2 entries left Node raises the
// minimum protocol to TLS 1.3.

/**
 * Without `cipherSuite`: Mozilla's "intermediate" profile — the TLS 1.3 suites and, for TLS 1.2,
 * only forward-secret AEAD suites. Node's own default still offers CBC suites (LUCKY13).
 */
export const DEFAULT_CIPHER_SUITES = [
  'TLS_AES_128_GCM_SHA256',
  'TLS_AES_256_GCM_SHA384',
  'TLS_CHACHA20_POLY1305_SHA256',
  'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256',
  'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256',
  'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384',
  'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384',
  'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256',
  'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256',
  'TLS_DHE_RSA_WITH_AES_128_GCM_SHA256',
  'TLS_DHE_RSA_WITH_AES_256_GCM_SHA384',
  'TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256',
];

/**
 * The `ciphers` option for `tls.createSecureContext` that enables exactly the named suites
 * (validated names; an unknown one throws). A protocol version the list names no suite for keeps
 * Portico's defaults for it (DEFAULT_CIPHER_SUITES): whoever lists only TLS 1.3 suites is tuning
 * TLS 1.3, not turning TLS 1.2 off, and must not get a weaker TLS 1.2 for it (Node's own defaults
 * include CBC suites). Left alone, Node would fill in TLS 1.3 but not TLS 1.2: a string with only
 * TLS 1.3 entries makes it raise the minimum protocol to TLS 1.3. An empty list means no
 * restriction at all, so no option.
 */
export function cipherOptions(names: readonly string[]): Pick<SecureContextOptions, 'ciphers'> {
  if (names.length === 0) return {};
  const suites = names.map((name) => {
    const suite = findCipherSuite(name);
    if (!suite) throw new Error(`Unknown cipher suite "${name}"`);
    return suite;
  });
  const defaults = DEFAULT_CIPHER_SUITES.map((name) => findCipherSuite(name)!);
  const tls13 = suites.some((s) => s.tls13) ? suites : defaults;
  const tls12 = suites.some((s) => !s.tls13) ? suites : defaults;
  const entries = [
    ...tls13.filter((s) => s.tls13).map((s) => s.iana),
    ...tls12.filter((s) => !s.tls13).map((s) => s.openssl),
  ];
  return { ciphers: [...new Set(entries)].join(':') };
}
