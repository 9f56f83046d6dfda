// The handler chain of one Resolved, in ARCHITECTURE.md's fixed order: `allow`/`deny`, rateLimit,
// HTTPS and www redirects, rewriteMap, nonStandardCodes, the trailing-slash redirect, the modules
// in `loadModules` order, the method check, static files; nothing answering is a 404. (The client
// address, the blocklist and the URL sanitizer come first, in the request handler: the blocklist
// must answer before even a malformed request is refused, and the location depends on the
// sanitized path.) Access rules come before the limits, so a refused client takes no token. Built
// at compile time, with only the stages this Resolved needs.
import { resolve } from 'node:path';
import type { AuthServices } from '../auth/auth-services.js';
import type { ResolvedSettings } from '../config/defaults.js';
import type { Logger } from '../http/logger.js';
import { HttpError } from '../http/http-error.js';
import { compose, Refusal, type Handler, type Stage } from '../http/stage.js';
import { accessList } from '../stages/access-list.js';
import { methodCheck } from '../stages/method-check.js';
import { nonStandardCodes } from '../stages/non-standard-codes.js';
import { httpsRedirect, wwwRedirect } from '../stages/redirects.js';
import { rateLimit, type LimitPlaces } from '../stages/rate-limit.js';
import { rewriteMap } from '../stages/rewrite-map.js';
import { trailingSlash } from '../stages/trailing-slash.js';
import type { StaticFiles } from '../static/static-files.js';
import type { Provisioner } from './provisioner.js';

/** What building one chain needs: the Plan's resources and its module provisioner. */
export interface ChainServices {
  readonly files: StaticFiles;
  readonly errorLog: Logger;
  readonly auth: AuthServices;
  readonly modules: Provisioner;
  readonly limits: LimitPlaces;
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
  const errorPage = purpose === 'errorPage';
  const stages: Stage[] = [];
  // An error page is rendered for a request that was let in: it is not refused again.
  if (!errorPage)
    for (const stage of [accessList(settings), rateLimit(settings, services.limits)])
      if (stage) stages.push(stage);
  for (const stage of [
    httpsRedirect(settings),
    wwwRedirect(settings),
    rewriteMap(settings, services.files, services.errorLog),
    nonStandardCodes(settings, services.auth),
  ]) {
    if (stage) stages.push(stage);
  }
  const wwwroot = settings.wwwroot === undefined ? undefined : resolve(settings.wwwroot);
  if (wwwroot !== undefined && !settings.disableTrailingSlashRedirects)
    stages.push(trailingSlash(wwwroot, services.files));
  for (const name of settings.loadModules ?? []) {
    const stage = services.modules.stage(name, settings);
    if (stage) stages.push(stage);
  }
  if (!errorPage) stages.push(methodCheck);
  if (wwwroot !== undefined)
    stages.push(services.files.stage({ ...settings, wwwroot }, { errorPage }));
  return compose(stages, notFound);
}
