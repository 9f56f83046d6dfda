// Config → Plan: the listeners to open and, per host and location, a frozen Resolved with its
// prepared chain. All merging happens here, once; a request only looks things up.
import type { ModuleName, Settings } from '../config/properties.js';
import { withDefaults } from '../config/defaults.js';
import { parseListen } from '../config/formats.js';
import type { Config, HostConfig } from '../config/validate.js';
import { IpList } from '../server/ip-list.js';
import { buildChain, type PipelineServices } from '../server/pipeline.js';
import type { SecureContextOptions } from 'node:tls';
import type { Settings as Http2Settings } from 'node:http2';
import { loadCertificates, policyOptions, type CertificateSet, type KeyPair } from '../tls/certificates.js';
import type { OcspStapler } from '../tls/ocsp.js';
import { HostTable } from './host-table.js';
import { mergeSettings } from './merge.js';
import type { CustomHeader, ErrorConfigRoute, Resolved } from './resolved.js';
import { locationPrefix, Site, type LocationRoute } from './site.js';

export interface ListenerSpec {
  /** `http://127.0.0.1:8080`, `https://0.0.0.0:443`: what /status lists. */
  readonly id: string;
  /** The id plus what a running protocol server cannot change (HTTP/2, client certificates): a reload that changes it replaces the protocol server, keeping the socket. */
  readonly key: string;
  /** undefined: every address (dual-stack). */
  readonly address: string | undefined;
  readonly port: number;
  readonly secure: boolean;
}

/** What a TLS listener needs, read once per configuration. */
export interface TlsSetup {
  readonly certificates: CertificateSet;
  readonly policy: SecureContextOptions;
  readonly fallbackPair: KeyPair | undefined;
  readonly requestCert: boolean;
  readonly http2: boolean;
  readonly http2Settings: Http2Settings | undefined;
  readonly onOcspRequest?: (certificate: Buffer, issuer: Buffer | null, callback: (err: Error | null, response?: Buffer) => void) => void;
}

export interface Plan {
  readonly config: Config;
  readonly global: ReturnType<typeof withDefaults>;
  readonly hosts: HostTable;
  readonly listeners: readonly ListenerSpec[];
  /**
   * The global-only `blocklist`, compiled: checked by the request handler before anything else
   * answers (CONTRACT.md, point 5). Undefined when empty.
   */
  readonly blocklist: IpList | undefined;
  /** Present when HTTPS runs. */
  readonly tls: TlsSetup | undefined;
}

export class PlanError extends Error {}

/** What compiling needs besides the pipeline's services: the server's OCSP stapler. */
export interface CompileServices extends PipelineServices {
  readonly ocsp: OcspStapler;
}

export function compilePlan(config: Config, services: CompileServices): Plan {
  const global = withDefaults(config.global);
  for (const name of global.loadModules ?? []) {
    if (!services.modules.has(name as ModuleName)) {
      throw new PlanError(`module "${name}" (loadModules) is not available in this build of Portico`);
    }
  }
  const compiler = new Compiler(services);
  const sites = config.hosts.map((host) => compiler.site(config.global, host));
  const fallback = compiler.site(config.global, undefined);
  const blocklist = global.blocklist && global.blocklist.length > 0 ? new IpList(global.blocklist) : undefined;
  return Object.freeze({ config, global, hosts: new HostTable(sites, fallback), listeners: listenerSpecs(config.global), blocklist, tls: tlsSetup(global, services.ocsp) });
}

function tlsSetup(g: ReturnType<typeof withDefaults>, ocsp: OcspStapler): TlsSetup | undefined {
  if (!g.secure) return undefined;
  let certificates: CertificateSet;
  try {
    certificates = loadCertificates(g);
  } catch (e) {
    throw new PlanError((e as Error).message);
  }
  const settings = g.http2Settings;
  return {
    certificates,
    policy: policyOptions(g),
    fallbackPair: certificates.fallbackPair,
    requestCert: g.useClientCertificate,
    http2: g.enableHTTP2,
    http2Settings: settings && {
      ...(settings.initialWindowSize === undefined ? {} : { initialWindowSize: settings.initialWindowSize }),
      ...(settings.maxFrameSize === undefined ? {} : { maxFrameSize: settings.maxFrameSize }),
      ...(settings.maxConcurrentStreams === undefined ? {} : { maxConcurrentStreams: settings.maxConcurrentStreams }),
      ...(settings.maxHeaderListSize === undefined ? {} : { maxHeaderListSize: settings.maxHeaderListSize }),
      enableConnectProtocol: settings.enableConnectProtocol ?? false,
    },
    ...(g.enableOCSPStapling ? { onOcspRequest: ocsp.onOcspRequest } : {}),
  };
}

/** `http://127.0.0.1:8080`, `https://[::1]:443`, `http://0.0.0.0:80` (every address): how /status and messages name a listener. */
export function listenerId(secure: boolean, address: string | undefined, port: number): string {
  const shown = address === undefined ? '0.0.0.0' : address.includes(':') ? `[${address}]` : address;
  return `${secure ? 'https' : 'http'}://${shown}:${port}`;
}

function listenerSpecs(g: Settings): ListenerSpec[] {
  const d = withDefaults(g);
  const spec = (value: number | string, secure: boolean): ListenerSpec => {
    const parsed = typeof value === 'number' ? { host: undefined, port: value } : parseListen(value)!;
    const address = parsed.host === 'localhost' ? '127.0.0.1' : parsed.host;
    const id = listenerId(secure, address, parsed.port);
    const key = secure ? `${id} h2=${d.enableHTTP2} mtls=${d.useClientCertificate}` : id;
    return { id, key, address, port: parsed.port, secure };
  };
  const out: ListenerSpec[] = [];
  if (!(d.secure && d.disableNonEncryptedServer)) out.push(spec(d.port, false));
  if (d.secure) out.push(spec(d.sport, true));
  return out;
}

class Compiler {
  constructor(private readonly services: PipelineServices) {}

  site(global: Settings, host: HostConfig | undefined): Site {
    const hostSettings = host ? mergeSettings(global, host.settings) : global;
    const errorConfigs = host?.errorConfigs ?? [];
    const resolved = this.resolved(hostSettings, host, undefined, errorConfigs);
    const locations: LocationRoute[] = (host?.locations ?? []).map((l) => ({
      prefix: locationPrefix(l.path),
      resolved: this.resolved(mergeSettings(hostSettings, l.settings), host, l.path, errorConfigs),
    }));
    // Stable sort: longest prefix first, equal lengths in list order.
    locations.sort((a, b) => b.prefix.length - a.prefix.length);
    return new Site(host, resolved, locations);
  }

  resolved(
    merged: Settings,
    host: HostConfig | undefined,
    location: string | undefined,
    errorConfigs: HostConfig['errorConfigs'],
  ): Resolved {
    const routes: ErrorConfigRoute[] = errorConfigs.map((e) => ({
      scode: e.scode,
      resolved: this.resolved(mergeSettings(merged, e.settings), host, location, []),
    }));
    const settings = Object.freeze(withDefaults(merged));
    return Object.freeze({
      settings,
      host,
      location,
      customHeaders: customHeaders(settings.customHeaders),
      errorPages: errorPages(settings.errorPages),
      errorConfigs: routes,
      chain: buildChain(settings, this.services),
    });
  }
}

function customHeaders(map: Record<string, string> | undefined): CustomHeader[] {
  return Object.entries(map ?? {}).map(([name, value]) => ({ name, lower: name.toLowerCase(), value, hasPath: value.includes('{path}') }));
}

function errorPages(list: { scode: number; path: string }[] | undefined): Map<number, string[]> {
  const map = new Map<number, string[]>();
  for (const { scode, path } of list ?? []) map.set(scode, [...(map.get(scode) ?? []), path]);
  return map;
}
