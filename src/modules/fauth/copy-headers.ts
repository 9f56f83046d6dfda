// The `forwardedAuthCopyHeaders` of an allowed request, as the stages after fauth see them: the
// client's own fields of those names are always removed (a client must not be able to claim
// `Remote-User: admin` when the authentication server says nothing), then the server's are added.
import type { IncomingHttpHeaders } from 'node:http';
import type { Request } from '../../http/ctx.js';

export function replaceRequestHeaders(
  req: Request,
  from: IncomingHttpHeaders,
  names: readonly string[],
): void {
  if (names.length === 0) return;
  const raw = req.rawHeaders;
  for (let i = raw.length - 2; i >= 0; i -= 2)
    if (names.includes(raw[i]!.toLowerCase())) raw.splice(i, 2);
  const headers = req.headers as Record<string, string | string[] | undefined>;
  for (const name of names) {
    const value = from[name];
    delete headers[name];
    if (value === undefined) continue;
    const values = Array.isArray(value) ? value : [value];
    for (const v of values) raw.push(name, v);
    headers[name] = values.join(', ');
  }
}
