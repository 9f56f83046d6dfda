// The names the `cipherSuite` and `ecdhCurve` settings accept (TLS 1.2 and TLS 1.3 only), by
// either spelling and in any case. How they become Node's TLS options is tls/cipher-suites.ts.
import { editDistance, MAX_COMPARED } from './suggest.js';

export interface CipherSuite {
  /** The IANA (RFC) name, e.g. `TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256`. */
  iana: string;
  /** OpenSSL's name; for TLS 1.3 suites OpenSSL uses the IANA name. */
  openssl: string;
  tls13: boolean;
}

const tls13 = (iana: string): CipherSuite => ({ iana, openssl: iana, tls13: true });
const tls12 = (iana: string, openssl: string): CipherSuite => ({ iana, openssl, tls13: false });

/**
 * The suites a user may name. TLS 1.3: all five OpenSSL 3 implements (the two CCM ones are off
 * by default but can be enabled). TLS 1.2: the forward-secret AEAD suites for ECDSA and RSA
 * certificates, plus the ECDHE AES-CBC suites that older clients still need. Suites without
 * forward secrecy (plain RSA key exchange) are deliberately not nameable.
 */
export const CIPHER_SUITES: readonly CipherSuite[] = [
  tls13('TLS_AES_128_GCM_SHA256'),
  tls13('TLS_AES_256_GCM_SHA384'),
  tls13('TLS_CHACHA20_POLY1305_SHA256'),
  tls13('TLS_AES_128_CCM_SHA256'),
  tls13('TLS_AES_128_CCM_8_SHA256'),

  tls12('TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', 'ECDHE-ECDSA-AES128-GCM-SHA256'),
  tls12('TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', 'ECDHE-ECDSA-AES256-GCM-SHA384'),
  tls12('TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256', 'ECDHE-ECDSA-CHACHA20-POLY1305'),
  tls12('TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'ECDHE-RSA-AES128-GCM-SHA256'),
  tls12('TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'ECDHE-RSA-AES256-GCM-SHA384'),
  tls12('TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256', 'ECDHE-RSA-CHACHA20-POLY1305'),
  tls12('TLS_DHE_RSA_WITH_AES_128_GCM_SHA256', 'DHE-RSA-AES128-GCM-SHA256'),
  tls12('TLS_DHE_RSA_WITH_AES_256_GCM_SHA384', 'DHE-RSA-AES256-GCM-SHA384'),
  tls12('TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256', 'DHE-RSA-CHACHA20-POLY1305'),

  tls12('TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA', 'ECDHE-ECDSA-AES128-SHA'),
  tls12('TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA', 'ECDHE-ECDSA-AES256-SHA'),
  tls12('TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256', 'ECDHE-ECDSA-AES128-SHA256'),
  tls12('TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384', 'ECDHE-ECDSA-AES256-SHA384'),
  tls12('TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA', 'ECDHE-RSA-AES128-SHA'),
  tls12('TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA', 'ECDHE-RSA-AES256-SHA'),
  tls12('TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256', 'ECDHE-RSA-AES128-SHA256'),
  tls12('TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384', 'ECDHE-RSA-AES256-SHA384'),
];

// Both spellings, upper-cased: the contract is case-insensitive, OpenSSL itself is not.
const SUITES_BY_NAME = new Map(
  CIPHER_SUITES.flatMap((s) => [[s.iana, s] as const, [s.openssl, s] as const]),
);

/** The suite called `name`, by its IANA or OpenSSL name in any case. */
export function findCipherSuite(name: string): CipherSuite | undefined {
  return SUITES_BY_NAME.get(name.toUpperCase());
}

/**
 * The IANA name closest to an unknown `name`, for "did you mean". Hyphens count as underscores
 * so `ECDHE_RSA_AES128_GCM_SHA256` finds its suite; nothing is suggested when even the best match
 * differs in more than a third of the characters, because then it is a guess, not a typo.
 */
export function suggestCipherSuite(name: string): string | undefined {
  if (name.length > MAX_COMPARED) return undefined;
  const wanted = normalize(name);
  const limit = Math.max(2, Math.floor(wanted.length / 3));
  let best: { iana: string; distance: number } | undefined;
  for (const suite of CIPHER_SUITES) {
    const within = (best?.distance ?? limit + 1) - 1;
    const distance = Math.min(
      editDistance(wanted, normalize(suite.iana), within),
      editDistance(wanted, normalize(suite.openssl), within),
    );
    if (distance <= within) best = { iana: suite.iana, distance };
  }
  return best?.iana;
}

const normalize = (name: string): string => name.toUpperCase().replaceAll('-', '_');

/**
 * The curves `ecdhCurve` accepts: the setting's name, what to hand OpenSSL, and other spellings.
 * OpenSSL's own group names are case-sensitive (`P-256` works, `p-256` does not), so matching is
 * done here and the canonical OpenSSL name is passed on.
 */
export const ECDH_CURVES: readonly { name: string; openssl: string; aliases: readonly string[] }[] =
  [
    { name: 'x25519', openssl: 'X25519', aliases: [] },
    { name: 'secp256r1', openssl: 'prime256v1', aliases: ['prime256v1', 'P-256'] },
    { name: 'secp384r1', openssl: 'secp384r1', aliases: ['P-384'] },
    { name: 'secp521r1', openssl: 'secp521r1', aliases: ['P-521'] },
  ];

const CURVES_BY_NAME = new Map(
  ECDH_CURVES.flatMap((c) =>
    [c.name, ...c.aliases].map((n) => [n.toLowerCase(), c.openssl] as const),
  ),
);

/**
 * The OpenSSL name of a curve for Node's `ecdhCurve` option (which takes several joined by `:`),
 * by any of its names in any case.
 */
export function findCurve(name: string): string | undefined {
  return CURVES_BY_NAME.get(name.toLowerCase());
}
