// Every error status becomes a page here, and only here: an errorConfig for the status re-runs the
// chain with its settings (the page keeps the error's status); otherwise the first readable
// `errorPages` file for the status, otherwise the default page; a status without content (a
// nonStandardCodes 204, 205 or 304) has no page. Details go to the error log, never to the client.
import type { Ctx } from '../http/ctx.js';
import { errorPageBody } from './error-page.js';
import { HttpError, isHttpError, type HeaderPairs } from '../http/http-error.js';
import type { Logger } from '../http/logger.js';
import type { Resolved } from '../http/resolved.js';
import { hasNoContent, KeptHead, send, sendKept, type RawHeaders } from '../http/respond.js';

const OWN_HEADERS = new Set(['content-type', 'content-length']);

export class ErrorResponder {
  /** `errorLog`: the server's, for requests refused before a host's settings applied. */
  constructor(private readonly errorLog: Logger) {}

  /**
   * Synchronous unless a page must be read or an errorConfig re-runs a chain: a 404 flood costs no
   * promise.
   */
  respond(ctx: Ctx, error: unknown): Promise<void> | void {
    const e = isHttpError(error)
      ? error
      : new HttpError(500, 'internal', {
          detail: `Unexpected error while serving a request: ${describe(error)}`,
        });
    ctx.failure = e.code;
    // Nobody is waiting for a page: what failed for want of a client (a gateway's work cut when it
    // left, a write to the stream of a session Node closed for the client's abuse) is not a failure
    // to log. A limit's HttpError that cut an answer under way still is.
    if (ctx.clientGone && (!ctx.responded || !isHttpError(error))) return;
    if (e.detail && (e.status >= 500 || e.status === 400)) this.logFailure(ctx, e);
    if (ctx.responded) {
      // Too late for a page: the head (and maybe part of the body) is out. Cut the response so the
      // client sees it is incomplete rather than a silently truncated body.
      ctx.res.destroy();
      return;
    }
    const route =
      ctx.routed && ctx.errorStatus === undefined && ctx.resolved.errorConfigs.length > 0
        ? ctx.resolved.errorConfigs.find((r) => r.scode === undefined || r.scode === e.status)
        : undefined;
    if (route) return this.viaErrorConfig(ctx, e, route.resolved);
    return this.page(ctx, e.status, e.headers);
  }

  /** An errorConfig for the status re-runs the chain with its settings; the page keeps the status. */
  private async viaErrorConfig(ctx: Ctx, e: HttpError, resolved: Resolved): Promise<void> {
    ctx.errorStatus = e.status;
    ctx.errorHeaders = e.headers;
    ctx.resolved = resolved;
    try {
      await resolved.chain(ctx);
      return;
    } catch (inner) {
      if (ctx.responded) return void ctx.res.destroy();
      if (isHttpError(inner) && inner.status >= 500) this.logFailure(ctx, inner);
    }
    await this.page(ctx, e.status, e.headers);
  }

  /** `[code] detail`: the code is what log tools match on, the detail what a person reads. */
  private logFailure(ctx: Ctx, e: HttpError): void {
    this.logOf(ctx).log(`[${e.code}] ${e.detail ?? e.message}`);
  }

  /** The error log of the request's host, else the server's. */
  private logOf(ctx: Ctx): Logger {
    return (ctx.resolved as Resolved | undefined)?.errorLog ?? this.errorLog;
  }

  private page(ctx: Ctx, status: number, extra: HeaderPairs): Promise<void> | void {
    const headers: RawHeaders = [];
    for (const [name, value] of extra)
      if (!OWN_HEADERS.has(name.toLowerCase())) headers.push(name, value);
    if (hasNoContent(status)) return send(ctx, status, headers);
    const files = ctx.resolved?.errorPages.get(status);
    if (files === undefined || files.length === 0) return sendPage(ctx, status, headers, undefined);
    return this.configuredPage(ctx, files).then((body) => sendPage(ctx, status, headers, body));
  }

  /** The first configured error page for the status that can be read. */
  private async configuredPage(ctx: Ctx, files: readonly string[]): Promise<Buffer | undefined> {
    for (const path of files) {
      const read = await ctx.resolved.readErrorPage(path);
      if ('body' in read) return read.body;
      this.logOf(ctx).log(`Cannot use error page ${path}: ${read.problem}; using the default page`);
    }
    return undefined;
  }
}

/** The configured page's bytes, else the default page (rendered once per status). */
function sendPage(ctx: Ctx, status: number, headers: RawHeaders, configured: Buffer | undefined) {
  if (ctx.responded) return;
  const body = configured ?? errorPageBody(status, ctx.resolved?.settings.serverAdministratorEmail);
  if (headers.length === 0) return sendKept(ctx, pageHead(body, status), body);
  headers.push(...pageFields(body));
  send(ctx, status, headers, body);
}

// A page's head, kept with the page's bytes: a 404 flood builds no head per response.
const PAGE_HEADS = new WeakMap<Buffer, KeptHead>();

function pageHead(body: Buffer, status: number): KeptHead {
  let head = PAGE_HEADS.get(body);
  if (head === undefined || head.status !== status) {
    head = new KeptHead(pageFields(body), status);
    PAGE_HEADS.set(body, head);
  }
  return head;
}

function pageFields(body: Buffer): string[] {
  return ['Content-Length', String(body.length), 'Content-Type', 'text/html; charset=utf-8'];
}

function describe(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}
