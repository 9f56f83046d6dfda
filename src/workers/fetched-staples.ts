// OCSP stapling for a server with workers: the primary fetches each certificate's response once
// and publishes it to the workers, whose staplers never fetch (tls/ocsp.ts, `tellFetcher`). It
// prefetches for the configuration's certificate files and for each certificate automatic TLS
// obtains; one a worker's handshake shows first (a stored ACME certificate, a file whose issuer
// only Node found) is passed on by that worker and fetched for then.
//
// A reload's new files are prefetched; those it no longer names are not dropped but, as in a
// single process, pushed out by the stapler's bound (1000 certificates, least recently shown).
import { withDefaults, type ResolvedSettings } from '../config/defaults.js';
import type { Config } from '../config/validate.js';
import type { Logger } from '../http/logger.js';
import { acmeWanted } from '../plan/acme-use.js';
import type { AcmeEvent } from '../tls/acme-manager.js';
import { loadCertificates, type KeyPair } from '../tls/certificates.js';
import { OcspStapler } from '../tls/ocsp.js';
import type { ToWorker } from './messages.js';
import type { WorkerProcess } from './worker-process.js';

export class FetchedStaples {
  private stapler: OcspStapler | undefined;

  constructor(
    private readonly errorLog: Logger,
    /** To every serving worker. */
    private readonly tellAll: (message: ToWorker) => void,
  ) {}

  /** After the start and after each reload. */
  manage(config: Config): void {
    const g = withDefaults(config.global, config.properties);
    if (!g.secure || !g.enableOCSPStapling) return this.close();
    this.stapler ??= new OcspStapler({
      log: (message) => this.errorLog.log(message),
      publish: (event) => this.tellAll({ type: 'staple', event }),
    });
    // Automatic TLS replaces the files (plan/compile.ts): its certificates come by `obtained`
    // and, those found in its store, by `shown`.
    if (acmeWanted(config)) return;
    for (const pair of certificateFiles(g)) this.stapler.prefetch(pair.cert);
  }

  /** Automatic TLS's new certificate is fetched for before its first handshake. */
  obtained(event: AcmeEvent): void {
    if (event.kind === 'certificate') this.stapler?.prefetch(event.pair.cert);
  }

  /** A worker's handshake showed `certificate` first. */
  shown(certificate: Buffer, issuer: Buffer | null): void {
    this.stapler?.shownByFollower(certificate, issuer);
  }

  /** What a worker that starts now must be told. */
  brief(worker: WorkerProcess): void {
    for (const event of this.stapler?.current() ?? []) worker.send({ type: 'staple', event });
  }

  close(): void {
    this.stapler?.close();
    this.stapler = undefined;
  }
}

/**
 * The configuration's certificates; none when the files changed since the workers read them (the
 * workers' handshakes then pass the certificates they serve on).
 */
function certificateFiles(g: ResolvedSettings): readonly KeyPair[] {
  try {
    return loadCertificates(g).pairs;
  } catch {
    return [];
  }
}
