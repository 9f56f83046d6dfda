// The request fields a backend must see: the client's, unless a stage replaced some (the cache's
// revalidation asks with its own validators instead of the client's conditions). Every request
// builder (proxy, CGI family, Python) reads this one view, so none has its own replacing logic.
import type { IncomingHttpHeaders } from 'node:http';

/** The two forms request builders read, shaped as the request's own: a request is one as it is. */
export interface OutgoingFields {
  /** Lower-case names, values as Node joins them. */
  readonly headers: IncomingHttpHeaders;
  /** [name, value, …] as received. */
  readonly rawHeaders: readonly string[];
}

/**
 * `from` with `replacements` (lower-case name → value; undefined removes the field): a replaced
 * field leaves its place and the new value follows the others, in both forms alike.
 */
export function replacedFields(
  from: OutgoingFields,
  replacements: ReadonlyMap<string, string | undefined>,
): OutgoingFields {
  const headers: IncomingHttpHeaders = { ...from.headers };
  const rawHeaders: string[] = [];
  const raw = from.rawHeaders;
  for (let i = 0; i < raw.length; i += 2)
    if (!replacements.has(raw[i]!.toLowerCase())) rawHeaders.push(raw[i]!, raw[i + 1]!);
  for (const name of replacements.keys()) delete headers[name];
  for (const [name, value] of replacements) {
    if (value === undefined) continue;
    headers[name] = value;
    rawHeaders.push(name, value);
  }
  return { headers, rawHeaders };
}
