// Locations that match more than a prefix: `pathRegex`, `matchMethods`, `matchHeaders` and
// `matchQuery` (and `path`, when written beside them) must all hold. Such locations are tried in
// file order and the first that matches wins over the longest prefix location (nginx's order for
// its regex locations). A prefix hit therefore tries every one of them, so their path patterns are
// also joined into one gate per flag set: when no gate finds anything, no location whose pattern is
// in a gate can match, and only the others are tried.
import { compileRegex } from '../config/regex.js';
import type { Settings } from '../config/properties.js';
import { underPrefix } from './location-path.js';

/** What the conditions read of a request (an IncomingMessage or an HTTP/2 request is one). */
export interface LocationRequest {
  readonly method?: string | undefined;
  /** Names in lower case, as Node gives them. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

export interface Conditions {
  readonly pathRegex: RegExp | undefined;
  readonly methods: ReadonlySet<string> | undefined;
  /** Header names in lower case. */
  readonly headers: readonly (readonly [string, RegExp])[];
  readonly query: readonly (readonly [string, RegExp])[];
  /** Each condition as written, for `portico explain`. */
  readonly described: readonly string[];
}

/** A location's conditions, compiled; undefined when it has none (a plain prefix location). */
export function locationConditions(settings: Settings): Conditions | undefined {
  const { pathRegex, matchMethods, matchHeaders, matchQuery } = settings;
  if (
    pathRegex === undefined &&
    matchMethods === undefined &&
    matchHeaders === undefined &&
    matchQuery === undefined
  )
    return undefined;
  const headers = Object.entries(matchHeaders ?? {});
  const query = Object.entries(matchQuery ?? {});
  const described = [
    ...(pathRegex === undefined ? [] : [`pathRegex ${JSON.stringify(pathRegex)}`]),
    ...(matchMethods === undefined ? [] : [`matchMethods ${matchMethods.join(', ')}`]),
    ...headers.map(([name, regex]) => `matchHeaders ${name} ${JSON.stringify(regex)}`),
    ...query.map(([name, regex]) => `matchQuery ${name} ${JSON.stringify(regex)}`),
  ];
  return {
    pathRegex: pathRegex === undefined ? undefined : compileRegex(pathRegex),
    methods: matchMethods === undefined ? undefined : new Set(matchMethods),
    headers: headers.map(([name, regex]) => [name.toLowerCase(), compileRegex(regex)] as const),
    query: query.map(([name, regex]) => [name, compileRegex(regex)] as const),
    described,
  };
}

interface Route {
  readonly prefix: string | undefined;
  readonly conditions: Conditions | undefined;
}

export class ConditionalLocations<R extends Route> {
  /** Every route, in file order. */
  private readonly all: readonly R[];
  /** In file order, those whose pattern is in no gate: tried when no gate finds anything. */
  private readonly ungated: readonly R[];
  private readonly gates: readonly RegExp[];

  constructor(routes: readonly R[]) {
    this.all = routes;
    const sources = new Map<string, string[]>();
    const gated = new Set<R>();
    for (const route of routes) {
      const regex = route.conditions?.pathRegex;
      if (regex === undefined || !joinable(regex)) continue;
      const list = sources.get(regex.flags) ?? [];
      list.push(`(?:${regex.source})`);
      sources.set(regex.flags, list);
      gated.add(route);
    }
    this.gates = [...sources].map(([flags, list]) => new RegExp(list.join('|'), flags));
    this.ungated = routes.filter((r) => !gated.has(r));
  }

  /** The first route in file order whose conditions all hold, or undefined. */
  match(decodedPath: string, request: LocationRequest, query: string): R | undefined {
    let routes = this.ungated;
    for (const gate of this.gates)
      if (gate.test(decodedPath)) {
        routes = this.all;
        break;
      }
    // Parsed once, and only when a route asks for it.
    let parameters: URLSearchParams | undefined;
    for (const route of routes) {
      const c = route.conditions!;
      if (route.prefix !== undefined && !underPrefix(decodedPath, route.prefix)) continue;
      if (c.methods !== undefined && !c.methods.has(request.method ?? 'GET')) continue;
      if (c.pathRegex !== undefined && !c.pathRegex.test(decodedPath)) continue;
      if (!c.headers.every(([name, regex]) => someMatch(request.headers[name], regex))) continue;
      if (c.query.length > 0) {
        parameters ??= new URLSearchParams(query);
        const p = parameters;
        if (!c.query.every(([name, regex]) => p.getAll(name).some((v) => regex.test(v)))) continue;
      }
      return route;
    }
    return undefined;
  }
}

// A pattern that refers to its own groups (`\1`, `\k<name>`) or names one would mean something else
// beside others in one pattern; it is tried on its own. A false alarm (`\\1`) only costs speed.
function joinable(regex: RegExp): boolean {
  return !/\\[1-9]|\\k<|\(\?<(?![=!])/.test(regex.source);
}

// `unknown`: a header named `__proto__` reads the object's prototype, which is no value.
function someMatch(value: unknown, regex: RegExp): boolean {
  if (typeof value === 'string') return regex.test(value);
  return Array.isArray(value) && value.some((v) => typeof v === 'string' && regex.test(v));
}
