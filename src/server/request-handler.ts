// One request from socket to access log: pick the host and location, sanitize the path, run the
// Resolved's chain under the request time limit, render any error, log the line.
import type { Plan } from '../plan/compile.js';
import { normalizeAddress } from '../plan/host-table.js';
import { decodePath, sanitizePath } from '../stages/url-sanitizer.js';
import { ALLOWED_METHODS } from '../stages/method-check.js';
import { Ctx, type Request, type Response } from './ctx.js';
import { Deadlines } from './deadlines.js';
import type { ErrorResponder } from './error-responder.js';
import { HttpError } from './http-error.js';
import { send } from './respond.js';

export interface AccessRecord {
  readonly ctx: Ctx;
  readonly rawTarget: string;
  readonly protocol: string;
}

// `uri-host [":" port]` (RFC 9110 §7.2, RFC 3986 §3.2.2), lower-cased: a bracketed IP literal or a
// registered name (IPv4 included), then digits for the port. Anything else is a 400 before any
// configuration applies (RFC 9112 §3.2): a Host such as `example.org:@evil.com` must never reach
// a Location header.
const VALID_HOST = /^(?:\[[0-9a-z:.%]+\]|(?:[a-z0-9\-._~!$&'()*+,;=]|%[0-9a-f]{2})*)(?::[0-9]*)?$/;
const notFound = (): never => {
  throw new HttpError(404);
};

interface Addresses {
  readonly remote: string;
  readonly remotePort: number;
  readonly local: string;
  readonly localPort: number;
}
// Per connection, not per request: keep-alive connections carry many requests.
const addressesBySocket = new WeakMap<object, Addresses>();

function addressesOf(socket: Request['socket']): Addresses {
  let a = addressesBySocket.get(socket);
  if (a === undefined) {
    a = {
      remote: normalizeAddress(socket.remoteAddress ?? ''),
      remotePort: socket.remotePort ?? 0,
      local: normalizeAddress(socket.localAddress ?? ''),
      localPort: socket.localPort ?? 0,
    };
    addressesBySocket.set(socket, a);
  }
  return a;
}

export class RequestHandler {
  requestsTotal = 0;
  /** Called once per request when its response is finished or abandoned; unset, no listener is added. */
  onDone: ((record: AccessRecord) => void) | undefined;
  private readonly deadlines = new Deadlines();

  constructor(
    public plan: Plan,
    private readonly errors: ErrorResponder,
  ) {}

  handle(req: Request, res: Response, scheme: 'http' | 'https'): void {
    this.requestsTotal++;
    const plan = this.plan;
    const hostHeader = (req.headers.host ?? (req.headers[':authority'] as string | undefined))?.toLowerCase();
    const rawTarget = req.url ?? '/';
    // HTTP/2 hands each request its own proxy of the socket; the session's socket is the one to key by.
    const a = addressesOf('stream' in req ? (req.stream.session?.socket ?? req.socket) : req.socket);
    const ctx = new Ctx(req, res, scheme, Date.now(), a.remote, a.remotePort, a.local, a.localPort, hostHeader, hostHeader === undefined ? undefined : hostnameOf(hostHeader));
    const onDone = this.onDone;
    if (onDone) {
      const protocol = `HTTP/${req.httpVersionMajor === 2 ? '2.0' : req.httpVersion}`;
      res.once('close', () => onDone({ ctx, rawTarget, protocol }));
    }
    // Only until the response head: a long download after that is not cut (REFERENCE §13).
    if (plan.global.timeout !== null) this.deadlines.add(ctx, plan.global.timeout);

    if (hostHeader !== undefined && !VALID_HOST.test(hostHeader)) return this.fail(ctx, new HttpError(400));
    ctx.site = plan.hosts.match(ctx.hostname, ctx.localAddress);
    let pending: Promise<void> | void;
    try {
      this.route(ctx, rawTarget);
      pending = ctx.responded ? undefined : ctx.resolved.chain(ctx, notFound);
    } catch (error) {
      return this.fail(ctx, error);
    }
    if (pending) pending.then(undefined, (error: unknown) => this.fail(ctx, error));
  }

  /** Stops the deadline timer (shutdown). */
  close(): void {
    this.deadlines.close();
  }

  private fail(ctx: Ctx, error: unknown): void {
    this.errors.respond(ctx, error).catch((e: unknown) => {
      // The error responder itself failed (a broken socket): nothing more can be sent.
      if (!ctx.res.destroyed) ctx.res.destroy(e as Error);
    });
  }

  /** Sets the path, query and Resolved; answers `OPTIONS *` itself. */
  private route(ctx: Ctx, rawTarget: string): void {
    let target = rawTarget;
    if (!target.startsWith('/')) {
      if (target === '*') {
        ctx.resolved = ctx.site.resolved;
        if (ctx.method === 'OPTIONS') return void send(ctx, 204, ['Allow', ALLOWED_METHODS]);
        throw new HttpError(400, [['Allow', ALLOWED_METHODS]]);
      }
      target = originFormOf(target);
    }
    const q = target.indexOf('?');
    const rawPath = q < 0 ? target : target.slice(0, q);
    ctx.query = q < 0 ? '' : target.slice(q);
    // `allowDoubleSlashes` can differ per location: look it up by the raw path first.
    ctx.resolved = ctx.site.locate(safeDecode(rawPath));
    let path: string;
    try {
      path = sanitizePath(rawPath, ctx.resolved.settings.allowDoubleSlashes);
    } catch (error) {
      // There is no sanitized path: `{path}` in the 400's headers is the raw one (REFERENCE §11).
      ctx.originalPath = rawPath;
      throw error;
    }
    ctx.path = ctx.originalPath = path;
    if (path !== rawPath) ctx.resolved = ctx.site.locate(decodePath(path));
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
