// One host's compiled routes (or the global configuration's, when no host matches): its own
// Resolved and its locations, ordered so the first prefix that matches is the longest; its logs.
import type { HostConfig } from '../config/validate.js';
import type { Resolved } from '../http/resolved.js';
import type { SiteLogs } from './plan-logs.js';

export interface LocationRoute {
  /** The location path with trailing slashes removed and `//` collapsed: "" for "/". */
  readonly prefix: string;
  readonly resolved: Resolved;
}

export class Site {
  constructor(
    readonly host: HostConfig | undefined,
    readonly resolved: Resolved,
    /** Longest prefix first; equal lengths keep list order (CONTRACT.md, point 2). */
    readonly locations: readonly LocationRoute[],
    /** Where its requests and errors are logged. */
    readonly logs: SiteLogs,
  ) {}

  /** The Resolved for a URL-decoded path: the longest location prefix at a segment boundary. */
  locate(decodedPath: string): Resolved {
    for (const route of this.locations) {
      const p = route.prefix;
      if (
        decodedPath.startsWith(p) &&
        (decodedPath.length === p.length || decodedPath.charCodeAt(p.length) === 47)
      )
        return route.resolved;
    }
    return this.resolved;
  }
}

export function locationPrefix(path: string): string {
  return path.replace(/\/{2,}/g, '/').replace(/\/+$/, '');
}
