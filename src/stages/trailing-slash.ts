// A request for a directory without the trailing slash is redirected to it (301, query kept), so
// relative links in its index page resolve. Whether the path is a directory comes from the static
// file cache: no filesystem call per request for paths it knows.
import { send } from '../http/respond.js';
import type { Ctx } from '../http/ctx.js';
import type { Stage } from '../http/stage.js';
import type { StaticFiles } from '../static/static-files.js';
import { decodePath } from '../http/paths.js';

export function trailingSlash(wwwroot: string, files: StaticFiles): Stage {
  const redirect = (ctx: Ctx) =>
    send(ctx, 301, ['Location', `${ctx.path}/${ctx.query}`, 'Content-Length', '0']);
  return (ctx, next) => {
    if (ctx.path.endsWith('/')) return next(ctx);
    const kind = files.kind(wwwroot, decodePath(ctx.path), ctx.startedAt);
    if (kind instanceof Promise)
      return kind.then((k) => (k === 'directory' ? redirect(ctx) : next(ctx)));
    return kind === 'directory' ? redirect(ctx) : next(ctx);
  };
}
