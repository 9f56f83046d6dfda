// A response head made final before it leaves: an errorConfig page's error headers and status,
// the location's header rules (header-rules.ts: removeHeaders, setHeaders, customHeaders,
// `Server`), and no content fields on a status without content.
import type { Ctx } from './ctx.js';
import { hasHeader } from './header-list.js';
import { applyHeaderRules, NO_RULES } from './header-rules.js';

/**
 * Statuses whose responses have no content (RFC 9110 §6.4.1, §15.3.6), whatever was meant to go in
 * them: a nonStandardCodes 204 goes through the error flow (REFERENCE §6), and an errorConfig's page
 * for it is sent with its status. (No 1xx gets here: no stage makes one, and the validator refuses
 * one as a nonStandardCodes scode.)
 */
export const NO_CONTENT: ReadonlySet<number> = new Set([204, 205, 304]);

// Fields about content, left out of such a response: a 204 MUST NOT carry Content-Length or
// Transfer-Encoding (RFC 9110 §8.6, RFC 9112 §6.1), a 304's would be taken for the selected
// representation's, and the type or coding of a page that is not sent describes nothing.
const CONTENT_FIELDS = new Set([
  'content-type',
  'content-length',
  'content-encoding',
  'transfer-encoding',
]);

/** Makes the head final in place and returns the status it goes out with. */
export function finalize(ctx: Ctx, status: number, headers: string[]): number {
  for (const [name, value] of ctx.errorHeaders)
    if (!hasHeader(headers, name.toLowerCase())) headers.push(name, value);
  applyHeaderRules(headers, ctx.resolved?.headerRules ?? NO_RULES, ctx.originalPath);
  // A page rendered for an error by an errorConfig is still that error (CONTRACT.md, point 4).
  const sent = ctx.errorStatus !== undefined && status < 300 ? ctx.errorStatus : status;
  if (NO_CONTENT.has(sent)) withoutContentFields(headers, sent);
  sending(ctx, sent);
  return sent;
}

/** The status is final: the access log's, and the `timeout` limit no longer applies. */
export function sending(ctx: Ctx, status: number): void {
  ctx.status = status;
  ctx.deadline?.end();
}

function withoutContentFields(headers: string[], status: number): void {
  for (let i = headers.length - 2; i >= 0; i -= 2)
    if (CONTENT_FIELDS.has(headers[i]!.toLowerCase())) headers.splice(i, 2);
  // Node frames a 205 like any response: without a length it would send an empty chunked body, which
  // a client that knows 205 has no content would read as the start of the next response.
  if (status === 205) headers.push('Content-Length', '0');
}
