// What automatic TLS asks of a configuration (which CA, which store, which names), and the manager
// that serves it, leased by every Plan that uses the same CA and store.
import { withDefaults } from '../config/defaults.js';
import type { Config } from '../config/validate.js';
import type { Logger } from '../http/logger.js';
import { AcmeManager, type AcmeSettings } from '../tls/acme-manager.js';
import { defaultAcmeDirectory } from '../tls/acme-store.js';
import type { Leases } from './resources.js';

export interface AcmeUse {
  readonly manager: AcmeManager;
  readonly names: readonly string[];
  readonly settings: AcmeSettings;
}

const LETS_ENCRYPT = {
  production: 'https://acme-v02.api.letsencrypt.org/directory',
  staging: 'https://acme-staging-v02.api.letsencrypt.org/directory',
};

/** What automatic TLS of a configuration asks for: which CA and store, which names, how. */
export interface AcmeWanted {
  readonly directoryUrl: string;
  readonly storageRoot: string;
  /** Every host `domain` without `*` (REFERENCE-behaviour.md §19), one certificate each. */
  readonly names: readonly string[];
  readonly settings: AcmeSettings;
}

/** Undefined when the configuration does not turn automatic TLS on. */
export function acmeWanted(config: Config): AcmeWanted | undefined {
  const g = withDefaults(config.global, config.properties);
  if (!g.secure || !g.enableAutomaticTLS) return undefined;
  const domains = config.hosts.flatMap((h) => {
    const domain = h.settings.domain;
    return domain && !domain.includes('*') ? [domain.toLowerCase()] : [];
  });
  return {
    directoryUrl:
      g.automaticTLSDirectoryUrl ??
      (g.automaticTLSCaProduction ? LETS_ENCRYPT.production : LETS_ENCRYPT.staging),
    storageRoot: g.automaticTLSContactCacheDirectory ?? defaultAcmeDirectory(),
    names: [...new Set(domains)],
    settings: {
      email: g.automaticTLSContactEmail,
      challenge: g.useAutomaticTLSHTTPChallenge ? 'http-01' : 'tls-alpn-01',
    },
  };
}

/** Automatic TLS: the manager for this CA and store, shared by every Plan that uses them. */
export function acmeUse(
  wanted: AcmeWanted,
  leases: Leases,
  errorLog: Logger,
  follows: boolean,
): AcmeUse {
  const { directoryUrl, storageRoot } = wanted;
  const manager = leases.take(
    `acme:${directoryUrl}\0${storageRoot}`,
    () =>
      new AcmeManager({ directoryUrl, storageRoot, log: (m) => errorLog.log(m), orders: !follows }),
  );
  return { manager, names: wanted.names, settings: wanted.settings };
}
