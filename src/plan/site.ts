// One host's compiled routes (or the global configuration's, when no host matches): its own
// Resolved and its locations. Prefix locations are kept longest first, so the first that matches
// is the longest; locations with conditions (location-conditions.ts) are tried before it in file
// order, and the first of them to match wins, as nginx's regex locations do. It carries its logs.
import type { HostConfig, LocationConfig } from '../config/validate.js';
import type { Resolved } from '../http/resolved.js';
import {
  ConditionalLocations,
  type Conditions,
  type LocationRequest,
} from './location-conditions.js';
import { underPrefix } from './location-path.js';
import type { SiteLogs } from './plan-logs.js';

export interface LocationRoute {
  /** The location path normalised (location-path.ts): "" for "/"; undefined when it has none. */
  readonly prefix: string | undefined;
  /** Undefined for a plain prefix location. */
  readonly conditions: Conditions | undefined;
  readonly resolved: Resolved;
  /** Where it was written. */
  readonly source: LocationConfig;
}

export class Site {
  /** Longest prefix first; equal lengths keep list order (CONTRACT.md, point 2). */
  readonly prefixed: readonly LocationRoute[];
  /** Undefined when no location has a condition: the prefix look-up alone runs. */
  readonly conditional: ConditionalLocations<LocationRoute> | undefined;

  constructor(
    readonly host: HostConfig | undefined,
    readonly resolved: Resolved,
    /** In file order. */
    locations: readonly LocationRoute[],
    /** Where its requests and errors are logged. */
    readonly logs: SiteLogs,
  ) {
    // Stable sort: longest prefix first, equal lengths in list order.
    this.prefixed = locations
      .filter((l) => l.conditions === undefined)
      .sort((a, b) => (b.prefix ?? '').length - (a.prefix ?? '').length);
    const conditional = locations.filter((l) => l.conditions !== undefined);
    this.conditional = conditional.length > 0 ? new ConditionalLocations(conditional) : undefined;
  }

  /** The Resolved for a request with this URL-decoded, sanitized path and this query (`?…`). */
  locate(decodedPath: string, request: LocationRequest, query: string): Resolved {
    return this.route(decodedPath, request, query)?.resolved ?? this.resolved;
  }

  /** The location that takes the request; undefined when the host's own settings do. */
  route(decodedPath: string, request: LocationRequest, query: string): LocationRoute | undefined {
    return this.conditional?.match(decodedPath, request, query) ?? this.longestPrefix(decodedPath);
  }

  /** The prefix location with the longest path at a segment boundary of `decodedPath`. */
  longestPrefix(decodedPath: string): LocationRoute | undefined {
    for (const route of this.prefixed) if (underPrefix(decodedPath, route.prefix!)) return route;
    return undefined;
  }
}
