// The handler chain of one Resolved, in ARCHITECTURE.md's fixed order: `allow`/`deny`, rateLimit,
// HTTPS and www redirects, `respond`, rewriteMap, nonStandardCodes, the trailing-slash redirect,
// the modules in `loadModules` order, the method check, static files; nothing answering is a 404.
// Access rules come before the limits, so a refused client takes no token. `respond` comes where
// nginx's `return` does, in the rewrite phase: after the redirects and the access checks, before
// basic authentication (nonStandardCodes' 401) and before rewriteMap, which could not change its
// answer (the location is chosen already). With enableCompression, dynamic compression wraps the
// modules that answer from an origin (stages/dynamic-compression.ts). (The client address, the
// blocklist and the URL sanitizer come first, in the request handler: the blocklist must answer
// before even a malformed request is refused, and the location depends on the sanitized path.)
// Built at compile time, with only the stages this Resolved needs.
import { resolve } from 'node:path';
import type { AuthServices } from '../auth/auth-services.js';
import type { ResolvedSettings } from '../config/defaults.js';
import type { Logger } from '../http/logger.js';
import { HttpError } from '../http/http-error.js';
import { compose, Refusal, type Handler, type Stage } from '../http/stage.js';
import { dynamicCompression, endOfDynamicCompression } from '../stages/dynamic-compression.js';
import { methodCheck } from '../stages/method-check.js';
import { nonStandardCodes } from '../stages/non-standard-codes.js';
import { httpsRedirect, wwwRedirect } from '../stages/redirects.js';
import { fixedResponse } from '../stages/respond.js';
import { accessList } from '../stages/access-list.js';
import { rateLimit, type LimitPlaces } from '../stages/rate-limit.js';
import { rewriteMap } from '../stages/rewrite-map.js';
import { trailingSlash } from '../stages/trailing-slash.js';
import type { StaticFiles } from '../static/static-files.js';

/** What building one chain needs: the Plan's resources and what builds module stages. */
export interface ChainServices {
  readonly files: StaticFiles;
  /** The host's error log, else the server's. */
  readonly errorLog: Logger;
  readonly auth: AuthServices;
  readonly modules: ModuleStages;
  readonly limits: LimitPlaces;
}

/**
 * A module's stage where it is active, else undefined: the Plan's Provisioner, or a stand-in that
 * provisions nothing where a chain is only described (`portico explain`).
 */
export interface ModuleStages {
  /** `errorLog`: the host's, where the stage's own messages go. */
  stage(name: string, settings: ResolvedSettings, errorLog: Logger): Stage | undefined;
}

/** One stage of a chain, with the name `portico explain` shows for it. */
export interface ChainStep {
  readonly name: string;
  /** A `loadModules` module's stage, not a built-in one. */
  readonly module: boolean;
  readonly stage: Stage;
}

// What the chain answers when no stage did: returned, not thrown (stage.ts Refusal).
const NOT_FOUND = new Refusal(new HttpError(404, 'not-found'));
const notFound: Handler = () => NOT_FOUND;

/**
 * What a chain is for. `errorPage` is the chain an errorConfig runs to render an error's page: it
 * has no method check (the page is served whatever the method of the request that failed) and its
 * static files answer with the page (static-files.ts).
 */
export type ChainPurpose = 'request' | 'errorPage';

export function buildChain(
  settings: ResolvedSettings,
  services: ChainServices,
  purpose: ChainPurpose,
): Handler {
  return compose(
    chainSteps(settings, services, purpose).map((step) => step.stage),
    notFound,
  );
}

/** The stages of one Resolved's chain, in the order they run. */
export function chainSteps(
  settings: ResolvedSettings,
  services: ChainServices,
  purpose: ChainPurpose,
): ChainStep[] {
  const errorPage = purpose === 'errorPage';
  const steps: ChainStep[] = [];
  const add = (name: string, stage: Stage | undefined, module = false) => {
    if (stage) steps.push({ name, module, stage });
  };
  // An error page is rendered for a request that was let in: it is not refused again.
  if (!errorPage) {
    add('allowDeny', accessList(settings));
    add('rateLimit', rateLimit(settings, services.limits));
  }
  add('httpsRedirect', httpsRedirect(settings));
  add('wwwRedirect', wwwRedirect(settings));
  // An errorConfig renders a page for an error: a fixed answer it inherits is not that page.
  if (!errorPage) add('respond', fixedResponse(settings));
  add('rewriteMap', rewriteMap(settings, services.files, services.errorLog));
  add('nonStandardCodes', nonStandardCodes(settings, authLoggingTo(services)));
  const wwwroot = settings.wwwroot === undefined ? undefined : resolve(settings.wwwroot);
  if (wwwroot !== undefined && !settings.disableTrailingSlashRedirects)
    add('trailingSlash', trailingSlash(wwwroot, services.files));
  steps.push(...moduleSteps(settings, services));
  if (!errorPage) add('methodCheck', methodCheck);
  if (wwwroot !== undefined)
    add('staticFiles', services.files.stage({ ...settings, wwwroot }, { errorPage }));
  return steps;
}

/**
 * The modules' stages in `loadModules` order; with enableCompression, dynamic compression from
 * the first module that is not the cache to the last, so the usual `[cache, rproxy]` stores coded
 * responses. A cache listed between origin modules is inside: its hits pass a coder that leaves
 * them as they are (coded already, or not to be coded for this request's coding).
 */
function moduleSteps(settings: ResolvedSettings, services: ChainServices): ChainStep[] {
  const steps: ChainStep[] = [];
  let cache = -1;
  let first = -1;
  let last = -1;
  for (const name of settings.loadModules ?? []) {
    const stage = services.modules.stage(name, settings, services.errorLog);
    if (stage === undefined) continue;
    if (name === 'cache') cache = steps.length;
    else {
      if (first < 0) first = steps.length;
      last = steps.length;
    }
    steps.push({ name, module: true, stage });
  }
  if (!settings.enableCompression || first < 0) return steps;
  steps.splice(last + 1, 0, {
    name: 'endOfDynamicCompression',
    module: false,
    stage: endOfDynamicCompression,
  });
  steps.splice(first, 0, {
    name: 'dynamicCompression',
    module: false,
    stage: dynamicCompression(cache >= 0 && cache < last),
  });
  return steps;
}

/** The authentication state, its failures logged where the host's errors go. */
function authLoggingTo({ auth, errorLog }: ChainServices): AuthServices {
  return auth.errorLog === errorLog ? auth : { ...auth, errorLog };
}
