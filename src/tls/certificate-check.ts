// The certificate files, read at validation: an unreadable file or a key that does not belong to
// its certificate is a configuration error naming the file, not a failure at the first handshake.
import { X509Certificate } from 'node:crypto';
import { globalPlace, type ConfigCheck, type Place } from '../config/checks.js';
import { withDefaults } from '../config/defaults.js';
import { clip } from '../config/diagnostics.js';
import { checkKeyPair, checkPolicy, dnsNamesOf, policyOptions, readPem } from './certificates.js';

/**
 * Certificates and keys are read now, so an unreadable file or a key that does not belong to its
 * certificate is a configuration error naming the file, not a failure at the first handshake.
 * Each error points at the line that names the file (an SNI entry's own `cert` or `key`).
 * (Skipped by `convert`, which may run where the files are not.)
 */
export const checkCertificateFiles: ConfigCheck = (config, scopes, diags, { files }) => {
  if (!files) return;
  const g = config.global;
  const where = (name: string): Place => globalPlace(scopes, name);
  const globalRecord = scopes.find((s) => s.scope === 'global');
  const resolved = withDefaults(g);
  let policy: ReturnType<typeof policyOptions>;
  try {
    policy = policyOptions(resolved);
  } catch (e) {
    const at = where('clientCertificateCA');
    return diags.error(at.pos, at.path, (e as Error).message);
  }
  if (g.secure) {
    try {
      checkPolicy(policy);
    } catch (e) {
      const at = where('cipherSuite');
      return diags.error(at.pos, at.path, `the TLS settings are refused: ${(e as Error).message}`);
    }
  }
  // The certificate and the key are read apart, so one run names both when both are missing. The
  // key's path is shown: only /config hides it.
  const check = (
    certPath: string,
    keyPath: string,
    certAt: Place,
    keyAt: Place,
    serverName?: string,
  ) => {
    const read = (path: string, what: string, at: Place): Buffer | undefined => {
      try {
        return readPem(path, what);
      } catch (e) {
        diags.error(at.pos, at.path, (e as Error).message);
        return undefined;
      }
    };
    const cert = read(certPath, 'certificate', certAt);
    const key = read(keyPath, 'private key', keyAt);
    if (!cert || !key) return;
    let leaf: X509Certificate;
    try {
      leaf = checkKeyPair({ cert, key }, certPath, keyPath);
    } catch (e) {
      return diags.error(certAt.pos, certAt.path, (e as Error).message);
    }
    for (const problem of certificateProblems(leaf, certPath, serverName))
      diags.warn(certAt.pos, certAt.path, problem);
  };
  // Automatic TLS replaces cert, key and sni (REFERENCE-behaviour.md §19).
  if (!g.secure || g.enableAutomaticTLS) return;
  if (g.cert !== undefined && g.key !== undefined)
    check(g.cert, g.key, where('cert'), where('key'));
  const sni = globalRecord?.keys.get('sni')?.value;
  for (const [name, pair] of Object.entries(g.sni ?? {})) {
    const entry = sni?.kind === 'map' ? sni.entries.find((e) => e.key === name) : undefined;
    const field = (f: 'cert' | 'key'): Place => {
      const written =
        entry?.value.kind === 'map' ? entry.value.entries.find((e) => e.key === f) : undefined;
      return {
        pos: written?.keyPos ?? entry?.keyPos ?? where('sni').pos,
        path: `global.sni.${clip(name)}.${f}`,
      };
    };
    check(pair.cert, pair.key, field('cert'), field('key'), name);
  }
};

/**
 * What clients will refuse: a certificate out of its validity period, or one that does not cover
 * the `sni` name it is configured for (a wildcard entry is checked with a name below it).
 */
export function certificateProblems(
  cert: X509Certificate,
  certPath: string,
  serverName?: string,
  now = Date.now(),
): string[] {
  const problems: string[] = [];
  const from = new Date(cert.validFrom);
  const to = new Date(cert.validTo);
  if (to.getTime() < now)
    problems.push(`the certificate ${certPath} expired on ${to.toISOString()}`);
  if (from.getTime() > now)
    problems.push(`the certificate ${certPath} is not valid before ${from.toISOString()}`);
  if (serverName !== undefined) {
    const name = serverName.toLowerCase();
    const probe = name.startsWith('*.') ? `portico-check${name.slice(1)}` : name;
    if (cert.checkHost(probe) === undefined) {
      const names = dnsNamesOf(cert);
      problems.push(
        `the certificate ${certPath} does not cover ${serverName}` +
          (names.length > 0 ? ` (it names ${names.join(', ')})` : ' (it names no DNS name)'),
      );
    }
  }
  return problems;
}
