// Config → Plan: the listeners to open and, per host and location, a frozen Resolved with its
// prepared chain. All merging happens here, once; a request only looks things up. The Plan holds
// leases on the resources its chains use (resources.ts) and returns them when it is retired.
import type { Settings as Http2Settings } from 'node:http2';
import type { SecureContextOptions } from 'node:tls';
import { createAuthServices, type AuthOptions } from '../auth/auth-services.js';
import type { SharedStore } from '../store/shared-store.js';
import { withDefaults, type ResolvedSettings } from '../config/defaults.js';
import type { PropertyTable } from '../config/property-table.js';
import type { Settings } from '../config/properties.js';
import type { Config, HostConfig } from '../config/validate.js';
import { IpList } from '../http/ip-list.js';
import type { Logger } from '../http/logger.js';
import type { CustomHeader, ErrorConfigRoute, Resolved } from '../http/resolved.js';
import { StaticFiles } from '../static/static-files.js';
import { AcmeManager, type AcmeSettings } from '../tls/acme-manager.js';
import { defaultAcmeDirectory } from '../tls/acme-store.js';
import {
  loadCertificates,
  policyOptions,
  type CertificateSet,
  type KeyPair,
} from '../tls/certificates.js';
import { OcspStapler } from '../tls/ocsp.js';
import { buildChain, type ChainPurpose, type ChainServices } from './chain.js';
import { HostTable } from './host-table.js';
import { InFlight } from './in-flight.js';
import { limitPlaces } from './limit-places.js';
import { listenerSpecs, type ListenerSpec } from './listener-spec.js';
import { mergeSettings } from './merge.js';
import type { HostProcesses, Module } from './module.js';
import { Provisioner } from './provisioner.js';
import type { Leases, Resources } from './resources.js';
import { locationPrefix, Site, type LocationRoute } from './site.js';

/** What a TLS listener needs, read once per configuration. */
export interface TlsSetup {
  readonly certificates: CertificateSet;
  /** Automatic TLS's TLS-ALPN-01: the validation certificate for a name being validated. */
  readonly acmeChallenge?: (name: string) => KeyPair | undefined;
  readonly policy: SecureContextOptions;
  readonly requestCert: boolean;
  readonly http2: boolean;
  readonly http2Settings: Http2Settings;
  readonly onOcspRequest?: (
    certificate: Buffer,
    issuer: Buffer | null,
    callback: (err: Error | null, response?: Buffer) => void,
  ) => void;
}

export interface Plan {
  readonly config: Config;
  readonly global: ResolvedSettings;
  readonly hosts: HostTable;
  readonly listeners: readonly ListenerSpec[];
  /**
   * The global-only `blocklist`, compiled: checked by the request handler before anything else
   * answers (CONTRACT.md, point 5). Undefined when empty.
   */
  readonly blocklist: IpList | undefined;
  /** Present when HTTPS runs. */
  readonly tls: TlsSetup | undefined;
  /** Present when OCSP stapling runs: staples are fetched ahead of the first handshake. */
  readonly ocsp: OcspStapler | undefined;
  /** Present with automatic TLS: the manager and what this configuration asks of it. */
  readonly acme: AcmeUse | undefined;
  /** What this Plan holds; returned when it is retired (after `inFlight` ends) and at stop. */
  readonly leases: Leases;
  readonly inFlight: InFlight;
  /** module → the status of each of its provisioned stages, for /status. */
  moduleStatus(): Record<string, unknown[]>;
  /**
   * Resolves once what the modules start (Python applications) serves; rejects with PlanNotReady.
   * Nothing listens with a Plan before this.
   */
  ready(): Promise<void>;
}

export class PlanError extends Error {}

/** A module could not start what the configuration asks (an application that fails to import). */
export class PlanNotReady extends Error {}

export interface AcmeUse {
  readonly manager: AcmeManager;
  readonly names: readonly string[];
  readonly settings: AcmeSettings;
}

// HTTP/2 streams per connection unless http2Settings says otherwise.
const MAX_CONCURRENT_STREAMS = 128;

const LETS_ENCRYPT = {
  production: 'https://acme-v02.api.letsencrypt.org/directory',
  staging: 'https://acme-staging-v02.api.letsencrypt.org/directory',
};

/** What compiling needs: where resources live, the modules `loadModules` may name, the error log. */
export interface CompileServices {
  readonly resources: Resources;
  readonly modules: readonly Module[];
  readonly errorLog: Logger;
  /** Basic-authentication state options (tests shorten the lock-out window). */
  readonly auth?: AuthOptions;
  /** Certificates are ordered by another process (a worker's primary) and followed here. */
  readonly acmeFollows?: boolean;
  /** OCSP responses are fetched by another process (a worker's primary), told of certificates here. */
  readonly ocspFetcher?: (certificate: Buffer, issuer: Buffer | null) => void;
  /** State shared with the server's other processes. */
  readonly store: SharedStore;
  /** Worker processes serving together (1: this one alone). */
  readonly workerProcesses: number;
  /** Processes the primary runs for all workers (module.ts's ModuleServices). */
  readonly hostProcesses?: HostProcesses;
}

export function compilePlan(config: Config, services: CompileServices): Plan {
  const global = withDefaults(config.global, config.properties);
  const leases = services.resources.leases();
  const errorLog = services.errorLog;
  try {
    const modules = new Provisioner(services.modules, leases, {
      errorLog,
      store: services.store,
      workerProcesses: services.workerProcesses,
      ...(services.hostProcesses ? { hostProcesses: services.hostProcesses } : {}),
    });
    for (const name of global.loadModules ?? []) {
      if (!modules.has(name))
        throw new PlanError(
          `module "${name}" (loadModules) is not available in this build of Portico`,
        );
    }
    const compiler = new Compiler(config.properties, {
      files: leases.take('static-files', () => new StaticFiles()),
      auth: leases.take('auth', () => createAuthServices(errorLog, services.auth, services.store)),
      errorLog,
      modules,
      limits: limitPlaces(config, services.store, leases),
    });
    const sites = config.hosts.map((host) => compiler.site(config.global, host));
    const fallback = compiler.site(config.global, undefined);
    const blocklist =
      global.blocklist && global.blocklist.length > 0 ? new IpList(global.blocklist) : undefined;
    const ocsp =
      global.secure && global.enableOCSPStapling
        ? leases.take(
            'ocsp',
            () =>
              new OcspStapler({
                log: (message) => errorLog.log(message),
                tellFetcher: services.ocspFetcher,
              }),
          )
        : undefined;
    const wanted = acmeWanted(config);
    const acme = wanted && acmeUse(wanted, leases, errorLog, services.acmeFollows === true);
    return Object.freeze({
      config,
      global,
      hosts: new HostTable(sites, fallback),
      listeners: listenerSpecs(config.global),
      blocklist,
      tls: tlsSetup(global, ocsp, acme),
      ocsp,
      acme,
      leases,
      inFlight: new InFlight(modules.count > 0),
      moduleStatus: () => modules.status(),
      ready: () =>
        modules.ready().catch((e: unknown) => {
          throw new PlanNotReady((e as Error).message);
        }),
    });
  } catch (e) {
    void leases.release();
    throw e;
  }
}

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
function acmeUse(wanted: AcmeWanted, leases: Leases, errorLog: Logger, follows: boolean): AcmeUse {
  const { directoryUrl, storageRoot } = wanted;
  const manager = leases.take(
    `acme:${directoryUrl}\0${storageRoot}`,
    () =>
      new AcmeManager({ directoryUrl, storageRoot, log: (m) => errorLog.log(m), orders: !follows }),
  );
  return { manager, names: wanted.names, settings: wanted.settings };
}

function tlsSetup(
  g: ResolvedSettings,
  ocsp: OcspStapler | undefined,
  acme: AcmeUse | undefined,
): TlsSetup | undefined {
  if (!g.secure) return undefined;
  let certificates: CertificateSet;
  try {
    // Automatic TLS replaces cert, key and sni (REFERENCE-behaviour.md §19).
    certificates = acme ? acme.manager.certificates : loadCertificates(g);
  } catch (e) {
    throw new PlanError((e as Error).message);
  }
  const settings = g.http2Settings;
  return {
    certificates,
    policy: policyOptions(g),
    requestCert: g.useClientCertificate,
    http2: g.enableHTTP2,
    http2Settings: {
      ...(settings?.initialWindowSize === undefined
        ? {}
        : { initialWindowSize: settings.initialWindowSize }),
      ...(settings?.maxFrameSize === undefined ? {} : { maxFrameSize: settings.maxFrameSize }),
      // Always advertised: each stream may hold a file or a backend connection, and a client
      // told no limit opened thousands (nginx's default; Caddy's is 250).
      maxConcurrentStreams: settings?.maxConcurrentStreams ?? MAX_CONCURRENT_STREAMS,
      ...(settings?.maxHeaderListSize === undefined
        ? {}
        : { maxHeaderListSize: settings.maxHeaderListSize }),
      enableConnectProtocol: settings?.enableConnectProtocol ?? false,
    },
    ...(ocsp ? { onOcspRequest: ocsp.onOcspRequest } : {}),
    ...(acme ? { acmeChallenge: (name: string) => acme.manager.challengeFor(name) } : {}),
  };
}

class Compiler {
  private readonly readErrorPage: Resolved['readErrorPage'];
  /**
   * One list per distinct customHeaders: locations that inherit the same ones share it, so a head
   * kept for a file or an error page is finished once for all of them (respond.ts KeptHead).
   */
  private readonly customHeaderLists = new Map<string, readonly CustomHeader[]>();

  constructor(
    /** The table the configuration was read against: its merge rules and defaults. */
    private readonly properties: PropertyTable,
    private readonly services: ChainServices,
  ) {
    this.readErrorPage = (path) => services.files.errorPage(path);
  }

  site(global: Settings, host: HostConfig | undefined): Site {
    const hostSettings = host ? this.merge(global, host.settings) : global;
    const errorConfigs = host?.errorConfigs ?? [];
    const resolved = this.resolved(hostSettings, host, undefined, errorConfigs);
    const locations: LocationRoute[] = (host?.locations ?? []).map((l) => ({
      prefix: locationPrefix(l.path),
      resolved: this.resolved(this.merge(hostSettings, l.settings), host, l.path, errorConfigs),
    }));
    // Stable sort: longest prefix first, equal lengths in list order.
    locations.sort((a, b) => b.prefix.length - a.prefix.length);
    return new Site(host, resolved, locations);
  }

  private merge(parent: Settings, child: Settings): Settings {
    return mergeSettings(parent, child, this.properties);
  }

  private customHeaders(map: Record<string, string> | undefined): readonly CustomHeader[] {
    const entries = Object.entries(map ?? {});
    const key = JSON.stringify(entries);
    let list = this.customHeaderLists.get(key);
    if (list === undefined) {
      list = Object.freeze(
        entries.map(([name, value]) => ({
          name,
          lower: name.toLowerCase(),
          value,
          hasPath: value.includes('{path}'),
        })),
      );
      this.customHeaderLists.set(key, list);
    }
    return list;
  }

  resolved(
    merged: Settings,
    host: HostConfig | undefined,
    location: string | undefined,
    errorConfigs: HostConfig['errorConfigs'],
    purpose: ChainPurpose = 'request',
  ): Resolved {
    // An errorConfig's settings serve only error pages: their chain is built for that.
    const routes: ErrorConfigRoute[] = errorConfigs.map((e) => ({
      scode: e.scode,
      resolved: this.resolved(this.merge(merged, e.settings), host, location, [], 'errorPage'),
    }));
    const settings = Object.freeze(withDefaults(merged, this.properties));
    return Object.freeze({
      settings,
      host,
      location,
      customHeaders: this.customHeaders(settings.customHeaders),
      trustedProxies:
        settings.trustedProxies === undefined ? undefined : new IpList(settings.trustedProxies),
      errorPages: errorPages(settings.errorPages),
      readErrorPage: this.readErrorPage,
      errorConfigs: routes,
      chain: buildChain(settings, this.services, purpose),
    });
  }
}

function errorPages(list: { scode: number; path: string }[] | undefined): Map<number, string[]> {
  const map = new Map<number, string[]>();
  for (const { scode, path } of list ?? []) map.set(scode, [...(map.get(scode) ?? []), path]);
  return map;
}
