// Automatic TLS for a server with workers: the primary orders each certificate once and publishes
// every challenge answer and certificate to the workers, whose managers follow (they serve the
// TLS-ALPN-01 and HTTP-01 answers and the certificates; the CA may reach any of them).
import type { Config } from '../config/validate.js';
import { acmeWanted } from '../plan/acme-use.js';
import { AcmeManager, type AcmeEvent, type ManagedStatus } from '../tls/acme-manager.js';

export class OrderedCertificates {
  private manager: AcmeManager | undefined;
  /** The CA and store the manager serves: another one needs another manager. */
  private key: string | undefined;

  constructor(
    private readonly log: (message: string) => void,
    private readonly publish: (event: AcmeEvent) => Promise<void>,
  ) {}

  /** After the start and after each reload: the configuration's names get (or keep) theirs. */
  manage(config: Config): void {
    const wanted = acmeWanted(config);
    const key = wanted && `${wanted.directoryUrl}\0${wanted.storageRoot}`;
    if (key !== this.key) {
      this.manager?.close();
      this.key = key;
      this.manager =
        wanted &&
        new AcmeManager({
          directoryUrl: wanted.directoryUrl,
          storageRoot: wanted.storageRoot,
          log: this.log,
          publish: this.publish,
        });
      if (this.manager)
        this.log(
          `automatic TLS: the ACME account and certificates are kept in ${this.manager.directory}`,
        );
    }
    if (wanted) this.manager?.manage(wanted.names, wanted.settings);
  }

  /** What a worker that starts now must be told. */
  current(): AcmeEvent[] {
    return this.manager?.current() ?? [];
  }

  status(): ManagedStatus[] | undefined {
    return this.manager?.status();
  }

  close(): void {
    this.manager?.close();
    this.manager = undefined;
    this.key = undefined;
  }
}
