// Rules that relate several properties, run once every scope has been validated on its own.
import { isIP } from 'node:net';
import { isSupportedPasswordHash } from '../auth/password.js';
import { findCipherSuite } from './tls-names.js';
import type { Diagnostics } from './diagnostics.js';
import { isLoopback, parseListen } from './formats.js';
import { tcpPorts } from './listen-addresses.js';
import { checkListeners } from './listener-checks.js';
import { checkConditionPatterns } from './slow-patterns.js';
import type { PropertyTable } from './property-table.js';
import type { Settings } from './properties.js';
import type { Pos, RawEntry } from './raw.js';
import { checkResponseSettings } from './response-checks.js';
import type { Config, ScopeRecord, Validated } from './validate.js';

/** Where a property was written, for a message about it. */
export interface Place {
  readonly pos: Pos;
  readonly path: string;
}

/**
 * A check that a layer above the configuration adds (certificate files, a module's rules): it runs
 * after the table's own checks, on the validated Config, and reports with positions. `files` is
 * false for `convert`, which may run where the files are not. A module's check reads its own
 * properties from the scopes' settings as `S`.
 */
export type ConfigCheck<S = Settings> = (
  config: Config,
  scopes: readonly ScopeRecord<S>[],
  diags: Diagnostics,
  context: { readonly files: boolean },
) => void;

/** The rules relating properties, then the checks of the layers above, on a validated Config. */
export function checkConfig(
  { config, scopes }: Validated,
  diags: Diagnostics,
  checks: readonly ConfigCheck[],
  context: { readonly files: boolean },
): void {
  runChecks(config, scopes, diags);
  for (const check of checks) check(config, scopes, diags, context);
}

/** Where the global property `name` was written (the global block, or line 1, when it was not). */
export function globalPlace(scopes: readonly ScopeRecord[], name: string): Place {
  const record = scopes.find((s) => s.scope === 'global');
  const entry = record?.keys.get(name);
  return {
    pos: entry?.keyPos ?? record?.pos ?? { file: '', line: 1, col: 1 },
    path: `global.${name}`,
  };
}

function runChecks(config: Config, scopes: readonly ScopeRecord[], diags: Diagnostics): void {
  const globalRecord = scopes.find((s) => s.scope === 'global');
  const g = config.global;
  const where = (name: string): Place => globalPlace(scopes, name);
  const error = (name: string, message: string) => {
    const w = where(name);
    diags.error(w.pos, w.path, message);
  };
  const warn = (name: string, message: string) => {
    const w = where(name);
    diags.warn(w.pos, w.path, message);
  };

  if (g.tlsMinVersion && g.tlsMaxVersion && g.tlsMinVersion > g.tlsMaxVersion) {
    error('tlsMinVersion', `${g.tlsMinVersion} is above tlsMaxVersion ${g.tlsMaxVersion}`);
  }
  if ((g.cert === undefined) !== (g.key === undefined)) {
    error(g.cert === undefined ? 'key' : 'cert', 'cert and key go together: set both or neither');
  }
  const hasSni = g.sni !== undefined && Object.keys(g.sni).length > 0;
  if (
    g.secure &&
    !g.enableAutomaticTLS &&
    (g.cert === undefined || g.key === undefined) &&
    !hasSni
  ) {
    error(
      'secure',
      'HTTPS is on but there is no certificate: set cert and key, sni, or enableAutomaticTLS',
    );
  }
  checkListeners(g, scopes, diags);
  if (g.enableAutomaticTLS) {
    if (!g.secure) warn('enableAutomaticTLS', 'has no effect unless secure is true');
    // HTTP-01 is answered on the HTTP port, TLS-ALPN-01 on the HTTPS one (RFC 8555 §8.3, RFC 8737):
    // one listener of the list on that port is enough.
    const httpPorts = tcpPorts(g.port ?? 80);
    const httpsPorts = tcpPorts(g.sport ?? 443);
    if (g.useAutomaticTLSHTTPChallenge) {
      if (!httpPorts.includes(80))
        warn(
          'useAutomaticTLSHTTPChallenge',
          `the ACME CA validates HTTP-01 on port 80, but port is ${portsShown(httpPorts)}`,
        );
    } else if (!httpsPorts.includes(443))
      warn(
        'enableAutomaticTLS',
        `the ACME CA validates TLS-ALPN-01 on port 443, but sport is ${portsShown(httpsPorts)}`,
      );
    if (g.secure && g.useAutomaticTLSHTTPChallenge && g.disableNonEncryptedServer) {
      error(
        'useAutomaticTLSHTTPChallenge',
        'the HTTP-01 challenge needs the HTTP listener, which disableNonEncryptedServer turns off',
      );
    }
    // Automatic TLS replaces them (REFERENCE-behaviour.md §19).
    for (const name of ['cert', 'key', 'sni'] as const)
      if (g.secure && g[name] !== undefined)
        warn(name, `is ignored: enableAutomaticTLS gets a certificate for each host from the CA`);
    const names = config.hosts.filter((h) => h.settings.domain && !h.settings.domain.includes('*'));
    if (names.length === 0)
      warn('enableAutomaticTLS', 'no host has a non-wildcard domain to get a certificate for');
  }
  if (g.enableHTTP3) {
    const served = !g.secure
      ? 'HTTP/3 needs HTTPS too, and secure is off'
      : `HTTPS${g.enableHTTP2 === false ? ' is' : ' and HTTP/2 are'} served`;
    warn(
      'enableHTTP3',
      `HTTP/3 is not served: this Node.js runtime has no QUIC support (enableHTTP3 is ignored; ${served})`,
    );
    if (
      g.cipherSuite &&
      !g.cipherSuite.some((c) => findCipherSuite(c)?.iana === 'TLS_AES_128_GCM_SHA256')
    ) {
      warn(
        'enableHTTP3',
        'HTTP/3 needs the cipher suite TLS_AES_128_GCM_SHA256, which cipherSuite leaves out',
      );
    }
    if (g.tlsMaxVersion === 'TLSv1.2')
      warn('enableHTTP3', 'HTTP/3 needs TLS 1.3, which tlsMaxVersion TLSv1.2 leaves out');
  }
  if (g.admin?.listen !== undefined) {
    // A port alone binds 127.0.0.1 (admin-server.ts), which is loopback.
    const host = parseListen(String(g.admin.listen))?.host;
    if (host !== undefined && !isLoopback(host)) {
      const admin = globalRecord?.keys.get('admin')?.value;
      const listen =
        admin?.kind === 'map'
          ? admin.entries.find((e) => e.key === 'listen')?.value.pos
          : undefined;
      diags.warn(
        listen ?? where('admin').pos,
        'global.admin.listen',
        `the admin API has the power of a root shell; "${g.admin.listen}" is not a loopback address`,
      );
    }
  }

  // enableIPSpoofing without trustedProxies believes X-Forwarded-For from anyone: one header gets
  // past the blocklist and the brute-force lock-out. Trusted proxies set in an enclosing scope count.
  const trustsProxies = (path: string) =>
    scopes.some(
      (r) =>
        r.settings.trustedProxies !== undefined &&
        (r.scope === 'global' || path === r.path || path.startsWith(`${r.path}.`)),
    );
  for (const record of scopes) {
    if (record.settings.enableIPSpoofing !== true || trustsProxies(record.path)) continue;
    const entry = record.keys.get('enableIPSpoofing');
    diags.warn(
      entry?.keyPos ?? record.pos,
      `${record.path}.enableIPSpoofing`,
      'X-Forwarded-For is believed from any client, so one header gets past the blocklist and the brute-force lock-out; set trustedProxies to the addresses of your proxies',
    );
  }

  const loaded = new Set<string>(g.loadModules ?? []);
  const seenModules = new Set<string>();
  g.loadModules?.forEach((m) => {
    if (seenModules.has(m)) warn('loadModules', `module "${m}" is listed twice`);
    seenModules.add(m);
  });
  // An invalid loadModules was reported already; guessing which modules were meant would only add noise.
  const modulesKnown = g.loadModules !== undefined || !globalRecord?.keys.has('loadModules');
  for (const record of scopes)
    checkScope(record, config.properties, modulesKnown ? loaded : undefined, diags);
  checkHosts(config, scopes, diags);
  checkConditionPatterns(scopes, diags);
}

/** `8443`, `8443, 9443`, or `only Unix sockets`. */
function portsShown(ports: readonly number[]): string {
  return ports.length === 0 ? 'only Unix sockets' : ports.join(', ');
}

function checkScope(
  record: ScopeRecord,
  properties: PropertyTable,
  loaded: ReadonlySet<string> | undefined,
  diags: Diagnostics,
): void {
  const s: Settings = record.settings;
  const at = (name: string): RawEntry => record.keys.get(name)!;
  for (const [name, entry] of record.keys) {
    const modules = properties.modulesOf(name);
    if (loaded && modules.length > 0 && !modules.some((m) => loaded.has(m))) {
      const need =
        modules.length === 1
          ? `module "${modules[0]}" is not in loadModules`
          : `none of the modules ${modules.join(', ')} is in loadModules`;
      diags.warn(entry.keyPos, `${record.path}.${name}`, `has no effect: ${need}`);
    }
  }
  s.nonStandardCodes?.forEach((code, i) => {
    if (code.regex === undefined && code.url === undefined) {
      diags.error(
        itemPos(at('nonStandardCodes'), i),
        `${record.path}.nonStandardCodes[${i}]`,
        'needs "url" or "regex" to say which requests it applies to',
      );
    }
  });
  s.users?.forEach((user, i) => {
    if (!isSupportedPasswordHash(user.pass)) {
      diags.warn(
        itemPos(at('users'), i),
        `${record.path}.users[${i}].pass`,
        'not an Argon2, scrypt or PBKDF2 PHC hash, so this user can never log in (make one with `portico passwd`)',
      );
    }
  });
  checkResponseSettings(record, diags);
  if (s.domain !== undefined && /:\d+$/.test(s.domain) && !s.domain.startsWith('[')) {
    const bare = s.domain.replace(/:\d+$/, '');
    diags.warn(
      at('domain').value.pos,
      `${record.path}.domain`,
      `the port is ignored: hosts match by name on every port, so this is "${bare}"`,
    );
    s.domain = bare;
  }
}

function itemPos(entry: RawEntry, index: number): Pos {
  return entry.value.kind === 'list'
    ? (entry.value.items[index]?.pos ?? entry.value.pos)
    : entry.value.pos;
}

function checkHosts(config: Config, scopes: readonly ScopeRecord[], diags: Diagnostics): void {
  const seen = new Map<string, Pos>();
  const records = scopes.filter((s) => s.scope === 'host');
  config.hosts.forEach((host, i) => {
    const record = records[i];
    const path = record?.path ?? `hosts[${i}]`;
    const { domain, ip } = host.settings;
    // A selector that was written but invalid has its own error already.
    if (record?.keys.has('domain') || record?.keys.has('ip')) {
      if (domain === undefined && ip === undefined) return;
    } else {
      diags.error(host.pos, path, 'a host needs "domain" or "ip" (or both)');
      return;
    }
    const key = `${domain?.toLowerCase() ?? ''}|${ip === undefined ? '' : normalizeIp(ip)}`;
    const first = seen.get(key);
    if (first)
      diags.warn(
        host.pos,
        path,
        `same domain and ip as the host at ${first.file}:${first.line}:${first.col}, which wins; this one is never used`,
      );
    else seen.set(key, host.pos);
  });
}

function normalizeIp(ip: string): string {
  if (ip === 'localhost') return '::1';
  return isIP(ip) === 6 ? ip.toLowerCase().replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, '$1') : ip;
}
