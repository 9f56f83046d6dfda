// A request for a directory without the trailing slash is redirected to it (301, query kept), so
// relative links in its index page resolve. Whether the path is a directory comes from the static
// file cache: no filesystem call per request for paths it knows.
import { send } from '../server/respond.js';
import type { Stage } from '../server/stage.js';
import type { StaticFiles } from '../static/static-files.js';
import { decodePath } from './url-sanitizer.js';

export function trailingSlash(wwwroot: string, files: StaticFiles): Stage {
  return async (ctx, next) => {
    if (ctx.path.endsWith('/') || (await files.kind(wwwroot, decodePath(ctx.path))) !== 'directory') return next();
    send(ctx, 301, ['Location', `${ctx.path}/${ctx.query}`, 'Content-Length', '0']);
  };
}
