// `allow` and `deny`: nginx's access rules. The two lists are one list of rules, `deny` entries
// first, and the first that matches the client decides; with `allow` present, a client no rule
// matches is refused (nginx's closing `deny all`). The client is the address the access log shows,
// after `trustedProxies`. A host or location that sets either list replaces both of the enclosing
// scope's (plan/merge.ts, `replacesAlso`); an empty list sets no rule.
import type { ResolvedSettings } from '../config/defaults.js';
import { IpList } from '../http/ip-list.js';
import type { Stage } from '../http/stage.js';

export function accessList(settings: ResolvedSettings): Stage | undefined {
  const deny = listOf(settings.deny);
  const allow = listOf(settings.allow);
  if (deny === undefined && allow === undefined) return undefined;
  return (ctx, next) => {
    const client = ctx.clientAddress;
    if (deny?.has(client) === true || (allow !== undefined && !allow.has(client)))
      ctx.fail(403, 'denied');
    return next(ctx);
  };
}

function listOf(entries: readonly string[] | undefined): IpList | undefined {
  return entries === undefined || entries.length === 0 ? undefined : new IpList(entries);
}
