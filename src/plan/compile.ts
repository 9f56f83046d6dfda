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
import { headerList, headerRules, type HeaderRules } from '../http/header-rules.js';
import type { ErrorConfigRoute, Resolved } from '../http/resolved.js';
import { StaticFiles } from '../static/static-files.js';
import { acmeUse, acmeWanted, type AcmeUse } from './acme-use.js';
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
import { PlanLogs } from './plan-logs.js';
import { Provisioner } from './provisioner.js';
import type { Leases, Resources } from './resources.js';
import { locationConditions } from './location-conditions.js';
import { locationPrefix } from './location-path.js';
import { Site, type LocationRoute } from './site.js';

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
  /** HTTP/2's settings, over TLS and with prior knowledge (enableH2C) alike. */
  readonly http2Settings: Http2Settings;
  /** With proxyProtocol: the peers that may send a PROXY header (the global trustedProxies). */
  readonly proxyPeers: IpList | undefined;
  /** Present when OCSP stapling runs: staples are fetched ahead of the first handshake. */
  readonly ocsp: OcspStapler | undefined;
  /** Present with automatic TLS: the manager and what this configuration asks of it. */
  readonly acme: AcmeUse | undefined;
  /** What this Plan holds; returned when it is retired (after `inFlight` ends) and at stop. */
  readonly leases: Leases;
  /** Its log files; each site's own are its Site's. */
  readonly logs: PlanLogs;
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

// HTTP/2 streams per connection unless http2Settings says otherwise.
const MAX_CONCURRENT_STREAMS = 128;

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
  /** Where a log file that cannot be written says so (process.stderr when absent). */
  readonly stderr?: NodeJS.WritableStream;
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
    const logs = new PlanLogs(
      leases,
      { logger: errorLog, path: config.global.errorLogFilePath },
      services.stderr,
    );
    const hosts = compileHosts(
      config,
      {
        // A cache per symlink rule: what one rule found is not another's answer.
        files: leases.take(
          `static-files:${global.followSymlinks}`,
          () => new StaticFiles({ followSymlinks: global.followSymlinks }),
        ),
        auth: leases.take('auth', () =>
          createAuthServices(errorLog, services.auth, services.store),
        ),
        errorLog,
        modules,
        limits: limitPlaces(config, services.store, leases),
      },
      logs,
    );
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
      hosts,
      listeners: listenerSpecs(config.global),
      blocklist,
      tls: tlsSetup(global, ocsp, acme),
      http2Settings: http2SettingsOf(global),
      proxyPeers:
        global.proxyProtocol && global.trustedProxies
          ? new IpList(global.trustedProxies)
          : undefined,
      ocsp,
      acme,
      leases,
      logs,
      // A retired Plan's files stay open for the lines of its last requests.
      inFlight: new InFlight(modules.count > 0 || logs.fileCount > 0),
      moduleStatus: () => modules.status(),
      ready: () =>
        Promise.all([modules.ready(), logs.ready()]).then(
          () => undefined,
          (e: unknown) => {
            throw new PlanNotReady((e as Error).message);
          },
        ),
    });
  } catch (e) {
    void leases.release();
    throw e;
  }
}

/**
 * The host table with every host's and location's Resolved and chain: the Plan's, or, with
 * services that provision nothing, the one `portico explain` looks a URL up in.
 */
/** Where each site's logs come from: the Plan's files, or (explain) nothing opened. */
export type SiteLogsSource = Pick<PlanLogs, 'site'>;

export function compileHosts(
  config: Config,
  services: ChainServices,
  logs: SiteLogsSource,
): HostTable {
  const compiler = new Compiler(config.properties, services, logs);
  const sites = config.hosts.map((host) => compiler.site(config.global, host));
  return new HostTable(sites, compiler.site(config.global, undefined));
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
  return {
    certificates,
    policy: policyOptions(g),
    requestCert: g.useClientCertificate,
    http2: g.enableHTTP2,
    http2Settings: http2SettingsOf(g),
    ...(ocsp ? { onOcspRequest: ocsp.onOcspRequest } : {}),
    ...(acme ? { acmeChallenge: (name: string) => acme.manager.challengeFor(name) } : {}),
  };
}

function http2SettingsOf(g: ResolvedSettings): Http2Settings {
  const settings = g.http2Settings;
  return {
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
  };
}

class Compiler {
  private readonly readErrorPage: Resolved['readErrorPage'];
  /**
   * One object per distinct set of header rules: locations that inherit the same ones share it, so
   * a head kept for a file or an error page is finished once for all of them (respond.ts KeptHead).
   */
  private readonly headerRuleSets = new Map<string, HeaderRules>();

  constructor(
    /** The table the configuration was read against: its merge rules and defaults. */
    private readonly properties: PropertyTable,
    private readonly services: ChainServices,
    private readonly logs: SiteLogsSource,
  ) {
    this.readErrorPage = (path) => services.files.errorPage(path);
  }

  site(global: Settings, host: HostConfig | undefined): Site {
    const hostSettings = host ? this.merge(global, host.settings) : global;
    // The log properties are global and host ones: every location of the host shares its logs.
    const logs = this.logs.site(hostSettings);
    const services = { ...this.services, errorLog: logs.error };
    const errorConfigs = host?.errorConfigs ?? [];
    const resolved = this.resolved(services, hostSettings, host, undefined, errorConfigs);
    const locations: LocationRoute[] = (host?.locations ?? []).map((l) => ({
      prefix: l.path === undefined ? undefined : locationPrefix(l.path),
      conditions: locationConditions(l.settings),
      resolved: this.resolved(
        services,
        this.merge(hostSettings, l.settings),
        host,
        l.path,
        errorConfigs,
      ),
      source: l,
    }));
    return new Site(host, resolved, locations, logs);
  }

  private merge(parent: Settings, child: Settings): Settings {
    return mergeSettings(parent, child, this.properties);
  }

  private headerRules(settings: Settings): HeaderRules {
    const remove = settings.removeHeaders ?? [];
    const set = headerList(settings.setHeaders);
    const custom = headerList(settings.customHeaders);
    const key = JSON.stringify([remove, set, custom]);
    let rules = this.headerRuleSets.get(key);
    if (rules === undefined) {
      rules = headerRules(remove, set, custom);
      this.headerRuleSets.set(key, rules);
    }
    return rules;
  }

  resolved(
    services: ChainServices,
    merged: Settings,
    host: HostConfig | undefined,
    location: string | undefined,
    errorConfigs: HostConfig['errorConfigs'],
    purpose: ChainPurpose = 'request',
  ): Resolved {
    // An errorConfig's settings serve only error pages: their chain is built for that.
    const routes: ErrorConfigRoute[] = errorConfigs.map((e) => ({
      scode: e.scode,
      resolved: this.resolved(
        services,
        this.merge(merged, e.settings),
        host,
        location,
        [],
        'errorPage',
      ),
    }));
    const settings = Object.freeze(withDefaults(merged, this.properties));
    return Object.freeze({
      settings,
      host,
      location,
      headerRules: this.headerRules(settings),
      trustedProxies:
        settings.trustedProxies === undefined ? undefined : new IpList(settings.trustedProxies),
      errorPages: errorPages(settings.errorPages),
      readErrorPage: this.readErrorPage,
      errorConfigs: routes,
      errorLog: services.errorLog,
      chain: buildChain(settings, services, purpose),
    });
  }
}

function errorPages(list: { scode: number; path: string }[] | undefined): Map<number, string[]> {
  const map = new Map<number, string[]>();
  for (const { scode, path } of list ?? []) map.set(scode, [...(map.get(scode) ?? []), path]);
  return map;
}
