// Built-in redirects: HTTP → HTTPS when HTTPS runs (to `sport`, its first TCP port when it lists
// several, the port omitted when it is 443),
// then `wwwredirect` to the `www.` name. Path and query are kept; both are 301 with no body.
import type { ResolvedSettings } from '../config/defaults.js';
import { tcpPorts } from '../config/listen-addresses.js';
import { isIP } from 'node:net';
import type { Ctx } from '../http/ctx.js';
import { HttpError } from '../http/http-error.js';
import { send } from '../http/respond.js';
import type { Stage } from '../http/stage.js';

function redirect(ctx: Ctx, location: string): void {
  send(ctx, 301, ['Location', location, 'Content-Length', '0']);
}

export function httpsRedirect(settings: ResolvedSettings): Stage | undefined {
  if (!settings.secure || settings.disableNonEncryptedServer || settings.disableToHTTPSRedirect)
    return undefined;
  const port = tcpPorts(settings.sport)[0];
  const suffix = port === undefined || port === 443 ? '' : `:${port}`;
  return (ctx, next) => {
    if (ctx.scheme === 'https') return next(ctx);
    if (ctx.hostname === undefined)
      throw new HttpError(400, 'redirect-without-host', {
        detail: 'An HTTPS redirect needs a Host header',
      });
    const host = isIP(ctx.hostname) === 6 ? `[${ctx.hostname}]` : ctx.hostname;
    redirect(ctx, `https://${host}${suffix}${ctx.originalPath}${ctx.query}`);
  };
}

export function wwwRedirect(settings: ResolvedSettings): Stage | undefined {
  const domain = settings.domain?.toLowerCase();
  // Not for wildcards, IP hosts, or names that already start with www.
  if (
    !settings.wwwredirect ||
    domain === undefined ||
    domain.includes('*') ||
    domain.startsWith('www.') ||
    isIP(domain) !== 0
  )
    return undefined;
  return (ctx, next) => {
    if (ctx.hostname !== domain || ctx.hostHeader === undefined) return next(ctx);
    redirect(ctx, `${ctx.scheme}://www.${ctx.hostHeader}${ctx.originalPath}${ctx.query}`);
  };
}
