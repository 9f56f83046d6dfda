// blocklist: a listed client gets 403 through the error responder, on every port, before any
// other answer, redirects and malformed-request 400s included (CONTRACT.md, point 5). Checked
// once per request by the request handler. One Set look-up for plain addresses; ranges only when
// listed.
import type { ResolvedSettings } from '../config/defaults.js';
import { IpList } from '../server/ip-list.js';

// `blocklist` is global-only, so every Resolved shares the parent's array: compile it once.
const compiled = new WeakMap<readonly string[], IpList>();

/** `address` as Ctx holds it (normalised). */
export function isBlocked(address: string, settings: ResolvedSettings): boolean {
  const entries = settings.blocklist;
  if (!entries || entries.length === 0) return false;
  let list = compiled.get(entries);
  if (!list) compiled.set(entries, (list = new IpList(entries)));
  return list.has(address);
}
