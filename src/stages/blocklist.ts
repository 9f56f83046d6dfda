// blocklist: a listed client gets 403 through the error responder, on every port, before any
// redirect (CONTRACT.md, point 5). One Set look-up for plain addresses; ranges only when listed.
import type { ResolvedSettings } from '../config/defaults.js';
import { HttpError } from '../server/http-error.js';
import { IpList } from '../server/ip-list.js';
import type { Stage } from '../server/stage.js';

// `blocklist` is global-only, so every Resolved shares the parent's array: compile it once.
const compiled = new WeakMap<readonly string[], IpList>();

export function blocklist(settings: ResolvedSettings): Stage | undefined {
  const entries = settings.blocklist;
  if (!entries || entries.length === 0) return undefined;
  let list = compiled.get(entries);
  if (!list) compiled.set(entries, (list = new IpList(entries)));
  const blocked = list;
  return (ctx, next) => {
    if (blocked.has(ctx.clientAddress)) throw new HttpError(403);
    return next();
  };
}
