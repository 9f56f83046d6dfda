// `portico explain -c FILE URL [--method M] [--header 'N: V']...`: which host and which location
// would answer a request and why, what is set there, and the stages that would run, in order. The
// hosts and chains are compiled by the server's own code (plan/compile.ts, plan/chain.ts); nothing
// listens, and no module is provisioned: a module's stage is named where its options say it is
// active, so no backend is connected and no application started.
import { createAuthServices } from '../auth/auth-services.js';
import { clip } from '../config/diagnostics.js';
import { LOCATION_CONDITIONS } from '../config/properties.js';
import type { Pos } from '../config/raw.js';
import { redactScope } from '../config/redact.js';
import type { Config } from '../config/validate.js';
import { HttpError } from '../http/http-error.js';
import type { Logger } from '../http/logger.js';
import { decodePath, safeDecode, sanitizePath } from '../http/paths.js';
import type { Resolved } from '../http/resolved.js';
import type { Stage } from '../http/stage.js';
import { MODULES } from '../modules/registry.js';
import { chainSteps, type ChainServices, type ModuleStages } from '../plan/chain.js';
import { compileHosts } from '../plan/compile.js';
import { limitPlaces } from '../plan/limit-places.js';
import { Resources } from '../plan/resources.js';
import type { LocationRoute, Site } from '../plan/site.js';
import { StaticFiles } from '../static/static-files.js';
import { MemoryStore } from '../store/memory-store.js';
import { loadChosenConfig, printDiagnostics } from './config-file.js';
import { explainedRequest, type ExplainedRequest } from './explain-request.js';
import type { CommandIo } from './io.js';

export interface ExplainOptions {
  readonly method?: string | undefined;
  readonly headers: readonly string[];
}

// Where a request is routed, not what it is: these are shown on the host and location lines.
const ROUTING = new Set(['domain', 'ip', 'path', ...LOCATION_CONDITIONS]);
// A setting's value is shown up to this many characters.
const SHOWN = 100;

export async function explainCommand(
  configFile: string | undefined,
  url: string,
  options: ExplainOptions,
  io: CommandIo,
): Promise<number> {
  const request = explainedRequest(url, options.method, options.headers);
  if (typeof request === 'string') return fail(io, request);
  const loaded = await loadChosenConfig(configFile);
  printDiagnostics(loaded.diagnostics, io);
  if (!loaded.config) return fail(io, `${loaded.label}: configuration not valid`);
  const config = loaded.config;
  const errorLog: Logger = { log: () => undefined };
  const store = new MemoryStore();
  const auth = createAuthServices(errorLog, {}, store);
  const leases = new Resources().leases();
  try {
    const services: ChainServices = {
      files: new StaticFiles(),
      errorLog,
      auth,
      modules: namedModules(),
      limits: limitPlaces(config, store, leases),
    };
    // Nothing is opened: every site logs nowhere.
    const logs = { site: () => ({ access: undefined, error: errorLog }) };
    const site = compileHosts(config, services, logs).match(request.hostname, request.localAddress);
    // As the request handler does: the location by the raw path decoded picks the
    // allowDoubleSlashes the path is sanitized with, then the sanitized path picks the location.
    let route = site.route(safeDecode(request.path), request, request.query);
    let path: string;
    try {
      path = sanitizePath(
        request.path,
        (route?.resolved ?? site.resolved).settings.allowDoubleSlashes,
      );
      if (path !== request.path) route = site.route(decodePath(path), request, request.query);
    } catch (e) {
      if (!(e instanceof HttpError)) throw e;
      return fail(io, `the server refuses this path with ${e.status}: ${e.detail ?? e.code}`);
    }
    const resolved = route?.resolved ?? site.resolved;
    const sanitized = path === request.path ? '' : ` (sanitized from ${request.path})`;
    const lines = [
      [
        'request',
        `${request.method} ${request.scheme}://${request.authority}${path}${request.query}${sanitized}`,
      ],
      ['host', hostLine(config, site, request)],
      ['location', locationLine(config, site, route, decodePath(path))],
      ['settings', ...settingLines(config, resolved)],
    ];
    if (resolved.settings.blocklist?.length)
      lines.push(['before', 'the global blocklist, which answers its clients with 403']);
    lines.push(['stages', stagesLine(resolved, services)]);
    for (const [label, ...text] of lines)
      text.forEach((t, i) => io.stdout.write(`${(i === 0 ? label! : '').padEnd(10)}${t}\n`));
    return 0;
  } catch (e) {
    return fail(io, (e as Error).message);
  } finally {
    auth.close();
    await leases.release();
  }
}

function fail(io: CommandIo, message: string): number {
  io.stderr.write(`portico explain: ${message}\n`);
  return 1;
}

/** Module stages named where their options make them active; nothing is provisioned. */
function namedModules(): ModuleStages {
  const named: Stage = (ctx, next) => next(ctx);
  return {
    stage(name, settings) {
      const module = MODULES.find((m) => m.name === name);
      return module?.options(settings) === undefined ? undefined : named;
    },
  };
}

function at(pos: Pos): string {
  return `${pos.file}:${pos.line}:${pos.col}`;
}

function hostLine(config: Config, site: Site, request: ExplainedRequest): string {
  const host = site.host;
  if (host === undefined)
    return `none matches ${JSON.stringify(request.hostname)}: the global configuration answers`;
  const { domain, ip } = host.settings;
  const why = [
    domain === undefined ? '' : `domain ${JSON.stringify(domain)}`,
    ip === undefined ? '' : `ip ${ip} (the address the URL names)`,
  ].filter(Boolean);
  return `hosts[${config.hosts.indexOf(host)}] (${at(host.pos)}), by ${why.join(' and ')}`;
}

function locationLine(
  config: Config,
  site: Site,
  route: LocationRoute | undefined,
  decoded: string,
): string {
  if (route === undefined || site.host === undefined)
    return `none takes ${JSON.stringify(decoded)}: the host's own settings apply`;
  const name = `hosts[${config.hosts.indexOf(site.host)}].locations[${site.host.locations.indexOf(route.source)}]`;
  const where = `${name} (${at(route.source.pos)})`;
  if (route.conditions === undefined)
    return `${where}, the longest prefix: path ${JSON.stringify(route.source.path)}`;
  const conditions = [
    ...(route.source.path === undefined ? [] : [`path ${JSON.stringify(route.source.path)}`]),
    ...route.conditions.described,
  ];
  const prefix = site.longestPrefix(decoded);
  const over =
    prefix === undefined
      ? ''
      : `; it wins over the longest prefix location, path ${JSON.stringify(prefix.source.path)}`;
  return `${where}, the first in file order whose conditions hold: ${conditions.join(', ')}${over}`;
}

/** What the files set where the request lands (defaults left out), secrets redacted. */
function settingLines(config: Config, resolved: Resolved): string[] {
  const table = config.properties;
  const set: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(resolved.settings)) {
    const row = table.row(name);
    if (value === undefined || ROUTING.has(name) || row?.type.kind === 'section') continue;
    if (JSON.stringify(value) !== JSON.stringify(row?.default)) set[name] = value;
  }
  const shown = Object.entries(redactScope(set, table)).map(
    ([name, value]) => `${name}: ${clip(JSON.stringify(value), SHOWN)}`,
  );
  return shown.length > 0 ? shown : ['nothing beyond the defaults'];
}

/** The chain's stages in the order they run, from the code that builds it. */
function stagesLine(resolved: Resolved, services: ChainServices): string {
  const steps = chainSteps(resolved.settings, services, 'request');
  const names = steps.map((s) => (s.module ? `${s.name} (module)` : s.name));
  return `${names.join(' → ')}${names.length > 0 ? ' → ' : ''}404 when none answers`;
}
