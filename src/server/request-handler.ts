// One request from socket to access log: pick the host and location, sanitize the path, run the
// Resolved's chain under the request time limit, render any error, log the line.
import type { Plan } from '../plan/compile.js';
import { normalizeAddress } from '../plan/host-table.js';
import { decodePath, sanitizePath } from '../stages/url-sanitizer.js';
import { ALLOWED_METHODS } from '../stages/method-check.js';
import { Ctx, type Request, type Response } from './ctx.js';
import type { ErrorResponder } from './error-responder.js';
import { HttpError } from './http-error.js';
import { send } from './respond.js';

export interface AccessRecord {
  readonly ctx: Ctx;
  readonly rawTarget: string;
  readonly protocol: string;
}

export interface RequestHandlerHooks {
  /** Called once per request when its response is finished or abandoned. */
  readonly onDone: (record: AccessRecord) => void;
}

// Visible ASCII only: a Host header with anything else is refused before any configuration applies.
const VALID_HOST = /^[\x21-\x7e]*$/;

export class RequestHandler {
  requestsTotal = 0;

  constructor(
    public plan: Plan,
    private readonly errors: ErrorResponder,
    private readonly hooks: RequestHandlerHooks,
  ) {}

  handle(req: Request, res: Response, scheme: 'http' | 'https'): void {
    this.requestsTotal++;
    const plan = this.plan;
    const socket = req.socket;
    const rawHost = req.headers.host ?? (req.headers[':authority'] as string | undefined);
    const hostHeader = rawHost?.toLowerCase();
    const rawTarget = req.url ?? '/';
    const ctx = new Ctx(
      req,
      res,
      scheme,
      new Date(),
      normalizeAddress(socket.remoteAddress ?? ''),
      socket.remotePort ?? 0,
      normalizeAddress(socket.localAddress ?? ''),
      socket.localPort ?? 0,
      hostHeader,
      hostHeader === undefined ? undefined : hostnameOf(hostHeader),
    );
    const protocol = `HTTP/${req.httpVersionMajor === 2 ? '2.0' : req.httpVersion}`;
    res.once('close', () => {
      clearTimeout(timer);
      this.hooks.onDone({ ctx, rawTarget, protocol });
    });
    const timeout = plan.global.timeout;
    // Only until the response head: a long download after that is not cut (REFERENCE §13).
    const timer =
      timeout === null ? undefined : setTimeout(() => res.headersSent || socket.destroy(), timeout);

    if (hostHeader !== undefined && !VALID_HOST.test(hostHeader)) return this.bare(ctx, 400);
    ctx.site = plan.hosts.match(ctx.hostname, ctx.localAddress);
    this.route(ctx, rawTarget).then(
      () => (ctx.responded ? undefined : ctx.resolved.chain(ctx, () => ctx.fail(404))),
    ).catch((error: unknown) => this.errors.respond(ctx, error)).catch((error: unknown) => {
      // The error responder itself failed (a broken socket): nothing more can be sent.
      if (!res.destroyed) res.destroy(error as Error);
    });
  }

  /** Sets the path, query and Resolved; answers `OPTIONS *` itself. */
  private async route(ctx: Ctx, rawTarget: string): Promise<void> {
    let target = rawTarget;
    if (!target.startsWith('/')) {
      if (target === '*') {
        ctx.resolved = ctx.site.resolved;
        if (ctx.method === 'OPTIONS') return send(ctx, 204, ['Allow', ALLOWED_METHODS]);
        throw new HttpError(400, [['Allow', ALLOWED_METHODS]]);
      }
      target = originFormOf(target);
    }
    const q = target.indexOf('?');
    const rawPath = q < 0 ? target : target.slice(0, q);
    ctx.query = q < 0 ? '' : target.slice(q);
    // `allowDoubleSlashes` can differ per location: look it up by the raw path first.
    ctx.resolved = ctx.site.locate(safeDecode(rawPath));
    const path = sanitizePath(rawPath, ctx.resolved.settings.allowDoubleSlashes);
    ctx.path = ctx.originalPath = path;
    if (path !== rawPath) ctx.resolved = ctx.site.locate(decodePath(path));
  }

  /** A response that no configuration shaped (invalid Host): status page only. */
  private bare(ctx: Ctx, status: number): void {
    void this.errors.respond(ctx, new HttpError(status));
  }
}

function hostnameOf(host: string): string {
  let name = host;
  if (name.startsWith('[')) {
    const end = name.indexOf(']');
    name = end < 0 ? name : name.slice(0, end + 1);
  } else {
    const colon = name.lastIndexOf(':');
    if (colon >= 0) name = name.slice(0, colon);
  }
  return name.endsWith('.') ? name.slice(0, -1) : name;
}

/** `http://host/path?q` (absolute form, RFC 9112 §3.2.2) → `/path?q`; anything else is a 400. */
function originFormOf(target: string): string {
  if (/^https?:\/\//i.test(target)) {
    try {
      const url = new URL(target);
      return `${url.pathname}${url.search}`;
    } catch {
      // fall through to the 400
    }
  }
  throw new HttpError(400, [], `Malformed request target ${JSON.stringify(target.slice(0, 200))}`);
}

function safeDecode(path: string): string {
  if (!path.includes('%')) return path;
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}
