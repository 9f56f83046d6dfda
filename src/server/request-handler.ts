// One request from socket to access log: pick the host and location, sanitize the path, settle
// the client address and check the blocklist (first, whatever the request: CONTRACT.md, point 5),
// refuse what is malformed, run the Resolved's chain under the request time limit, render any
// error, log the line.
import type { Duplex } from 'node:stream';
import type { Plan } from '../plan/compile.js';
import type { Site } from '../plan/site.js';
import { applyForwardedFor } from '../stages/client-address.js';
import { SERVER_METHODS } from '../stages/method-check.js';
import { decodePath, safeDecode, sanitizePath } from '../http/paths.js';
import { Ctx, type Addresses, type Request, type Response } from '../http/ctx.js';
import { clientOf } from './connection-clients.js';
import { Deadlines } from './deadlines.js';
import type { ErrorResponder } from './error-responder.js';
import type { AcmeManager } from '../tls/acme-manager.js';
import { HttpError } from '../http/http-error.js';
import { bodyTooLarge, declaredTooLarge } from '../http/body-limit.js';
import { hasBody } from '../upstream/request-body.js';
import { normalizeAddress } from '../http/ip-list.js';
import { send } from '../http/respond.js';
import { Refusal, type Outcome } from '../http/stage.js';

export interface AccessRecord {
  readonly ctx: Ctx;
  readonly rawTarget: string;
  readonly protocol: string;
  /** The host routing chose (the global configuration when none matched): its logs. */
  readonly site: Site;
}

// `uri-host [":" port]` (RFC 9110 §7.2, RFC 3986 §3.2.2), lower-cased: a bracketed IP literal or a
// registered name (IPv4 included), then digits for the port. Anything else is a 400 without any
// host's configuration (RFC 9112 §3.2): a Host such as `example.org:@evil.com` must never reach a
// Location header.
export const VALID_HOST =
  /^(?:\[[0-9a-z:.%]+\]|(?:[a-z0-9\-._~!$&'()*+,;=]|%[0-9a-f]{2})*)(?::[0-9]*)?$/;

/** A Host (or `:authority`, or absolute-form authority) as received, lower-cased and checked. */
interface Authority {
  readonly raw: string;
  readonly lower: string;
  readonly valid: boolean;
  /** The host name alone: no port, no trailing dot. */
  readonly hostname: string;
}

// Per connection, not per request: keep-alive connections carry many requests.
const addressesBySocket = new WeakMap<object, Addresses>();

function addressesOf(socket: Request['socket']): Addresses {
  let a = addressesBySocket.get(socket);
  if (a === undefined) {
    // A PROXY header's client, or a Unix-socket peer, in place of the peer's address.
    const client = clientOf(socket);
    a = {
      remote: client?.address ?? normalizeAddress(socket.remoteAddress ?? ''),
      remotePort: client?.port ?? socket.remotePort ?? 0,
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
  private lastAuthority: Authority | undefined;

  constructor(
    public plan: Plan,
    private readonly errors: ErrorResponder,
  ) {}

  handle(req: Request, res: Response, scheme: 'http' | 'https', upgrade?: Duplex): void {
    this.requestsTotal++;
    const plan = this.plan;
    // CONNECT's target is an authority (`a.test:443`; HTTP/2 puts it in `:authority`, with no path).
    // HTTP/2's extended CONNECT (RFC 8441, a WebSocket) names a path and is routed like any request.
    const connect = req.method === 'CONNECT' && req.headers[':protocol'] === undefined;
    const rawTarget =
      (connect ? (req.url ?? (req.headers[':authority'] as string | undefined)) : req.url) ?? '/';
    const target = connect ? CONNECT_TARGET : parseTarget(rawTarget);
    const host = req.headers.host;
    // An absolute-form target names the host itself, and Host is then ignored (RFC 9112 §3.2.2);
    // over HTTP/2, `:authority` wins over a Host field beside it (RFC 9113 §8.3.1).
    const absolute = target.kind === 'path' ? target.authority : undefined;
    const rawAuthority = absolute ?? (req.headers[':authority'] as string | undefined) ?? host;
    const authority = rawAuthority === undefined ? undefined : this.authorityOf(rawAuthority);
    // A missing, repeated or malformed Host names no host: the default one stands in until the
    // request is refused, after the blocklist.
    const hostValid =
      hasOneHost(req) &&
      (authority === undefined || authority.valid) &&
      (absolute === undefined || host === undefined || this.authorityOf(host).valid);
    // CONNECT names the far end of a tunnel, not a host here: the default host answers it.
    const named = hostValid && !connect ? authority : undefined;
    const a = addressesOf(req.socket);
    const site = plan.hosts.match(named?.hostname, a.local);
    const ctx = new Ctx({
      req,
      res,
      scheme,
      upgrade,
      addresses: a,
      hostHeader: named?.lower,
      hostname: named?.hostname,
    });
    // One 'close' listener, only when something waits for it: the access log, or a Plan whose
    // leases a reload may return once its last request has ended. A response closes once (Node
    // guards it): no once() wrapper to make and remove per request.
    const onDone = this.onDone;
    const inFlight = plan.inFlight.tracked ? plan.inFlight : undefined;
    if (onDone || inFlight) {
      inFlight?.start();
      const protocol = `HTTP/${req.httpVersionMajor === 2 ? '2.0' : req.httpVersion}`;
      res.on('close', () => {
        inFlight?.end();
        onDone?.({ ctx, rawTarget, protocol, site });
      });
    }
    // Only until the response head: a long download after that is not cut (REFERENCE §13).
    if (plan.global.timeout !== null) this.deadlines.add(ctx, plan.global.timeout);

    let pending: Outcome;
    try {
      this.route(ctx, site, target, hostValid);
      if (plan.global.maximumRequestBodySize !== null)
        boundBody(ctx, plan.global.maximumRequestBodySize);
      pending = ctx.responded ? undefined : ctx.resolved.chain(ctx);
    } catch (error) {
      return this.fail(ctx, error);
    }
    if (pending instanceof Refusal) this.fail(ctx, pending.error);
    else if (pending) pending.then(undefined, (error: unknown) => this.fail(ctx, error));
  }

  /**
   * The authority as routing reads it. Clients repeat the same Host on every request, so the last
   * one is remembered: no lower-casing, pattern test or slicing per request.
   */
  private authorityOf(raw: string): Authority {
    const last = this.lastAuthority;
    if (last !== undefined && last.raw === raw) return last;
    const lower = raw.toLowerCase();
    const valid = VALID_HOST.test(lower);
    return (this.lastAuthority = {
      raw,
      lower,
      valid,
      hostname: valid ? hostnameOf(lower) : lower,
    });
  }

  /** Stops the deadline timer (shutdown). */
  close(): void {
    this.deadlines.close();
  }

  private fail(ctx: Ctx, error: unknown): void {
    // The error responder itself failed (a broken socket): nothing more can be sent.
    const broken = (e: unknown) => {
      if (!ctx.clientGone) ctx.res.destroy(e as Error);
    };
    try {
      this.errors.respond(ctx, error)?.catch(broken);
    } catch (e) {
      broken(e);
    }
  }

  /**
   * Everything before the chain: the location of the sanitized path, the client address, the
   * blocklist, then the refusal of a malformed request (Host, target, path), `OPTIONS *` and
   * CONNECT. Sets the path, query and Resolved.
   */
  private route(ctx: Ctx, site: Site, target: Target, hostValid: boolean): void {
    let resolved = site.resolved;
    let pathError: unknown;
    if (target.kind === 'path') {
      ctx.query = target.query;
      // `allowDoubleSlashes` can differ per location: look it up by the raw path first.
      resolved = site.locate(safeDecode(target.path), ctx.req, target.query);
      try {
        const path = sanitizePath(target.path, resolved.settings.allowDoubleSlashes);
        if (path !== target.path) resolved = site.locate(decodePath(path), ctx.req, target.query);
        ctx.path = ctx.originalPath = path;
      } catch (error) {
        // There is no sanitized path: `{path}` in the 400's headers is the raw one (REFERENCE §11).
        ctx.originalPath = target.path;
        pathError = error;
      }
    }
    // Whether X-Forwarded-For is trusted depends on the location, hence on the sanitized path;
    // sanitizing has no effect of its own, so its refusal can wait until the blocklist has spoken.
    const forwardedError = applyForwardedFor(ctx, resolved);
    ctx.routed = hostValid && target.kind === 'path' && pathError === undefined;
    // Automatic TLS's HTTP-01 answer comes before the blocklist, redirects and authentication can
    // stand in the CA's way (REFERENCE-behaviour.md §19: the plain HTTP listener only).
    const challenge =
      target.kind === 'path' && ctx.scheme === 'http' && this.plan.acme
        ? http01Answer(this.plan.acme.manager, target.path)
        : undefined;
    if (challenge !== undefined) {
      ctx.resolved = resolved;
      return void send(
        ctx,
        200,
        ['Content-Type', 'text/plain', 'Content-Length', String(challenge.length)],
        challenge,
      );
    }
    if (this.plan.blocklist?.has(ctx.clientAddress)) {
      ctx.resolved = resolved;
      throw new HttpError(403, 'blocked');
    }
    // Node is told to keep every field (listener.ts), so none is dropped unseen on the way to a
    // backend or a script; past this many the request is refused whole.
    if (ctx.req.rawHeaders.length > 2 * MAX_HEADER_FIELDS) {
      ctx.resolved = resolved;
      throw new HttpError(431, 'too-many-fields');
    }
    // Before a Resolved is set: the bare default page, as no host could be chosen (REFERENCE §1.1).
    if (!hostValid) throw new HttpError(400, 'bad-host');
    ctx.resolved = resolved;
    if (forwardedError) throw forwardedError;
    if (target.kind === 'invalid') throw target.error;
    if (pathError !== undefined) throw pathError;
    if (target.kind === 'asterisk') {
      if (ctx.method === 'OPTIONS') return void send(ctx, 204, ['Allow', SERVER_METHODS]);
      throw new HttpError(400, 'bad-target', { headers: [['Allow', SERVER_METHODS]] });
    }
    // No module tunnels (Ferron's fproxy is not in Portico): 501 with an empty body, before any
    // redirect or authentication, as in Ferron (REFERENCE §1.1 step 9).
    if (target.kind === 'connect') send(ctx, 501, ['Content-Length', '0']);
  }
}

/**
 * `maximumRequestBodySize`: a declared length past it is refused before any of the body is read
 * (and the connection, whose rest is never read, is not kept); a body of unknown length is
 * counted as its readers take it (Ctx.body).
 */
function boundBody(ctx: Ctx, limit: number): void {
  if (ctx.responded || !hasBody(ctx.req)) return;
  if (!declaredTooLarge(ctx.req.headers['content-length'], limit)) {
    if (ctx.req.headers['content-length'] === undefined) ctx.bodyLimit = limit;
    return;
  }
  if ('shouldKeepAlive' in ctx.res) ctx.res.shouldKeepAlive = false;
  throw bodyTooLarge(limit);
}

const ACME_CHALLENGE_PATH = '/.well-known/acme-challenge/';
// Header fields in one request at most (Apache's LimitRequestFields is 100; browsers send ~20).
const MAX_HEADER_FIELDS = 1000;

/** The key authorization for an HTTP-01 token being validated (RFC 8555 §8.3). */
function http01Answer(manager: AcmeManager, path: string): Buffer | undefined {
  if (!path.startsWith(ACME_CHALLENGE_PATH)) return undefined;
  const answer = manager.keyAuthorization(path.slice(ACME_CHALLENGE_PATH.length));
  return answer === undefined ? undefined : Buffer.from(answer);
}

/** What a request target names (RFC 9112 §3.2). */
type Target =
  | {
      readonly kind: 'path';
      /** Raw, as received: the origin form's, or the absolute form's path. */
      readonly path: string;
      /** `?…` or empty. */
      readonly query: string;
      /** The absolute form's `host[:port]`. */
      readonly authority: string | undefined;
    }
  | { readonly kind: 'asterisk' | 'connect' }
  | { readonly kind: 'invalid'; readonly error: HttpError };

const ASTERISK: Target = { kind: 'asterisk' };
const CONNECT_TARGET: Target = { kind: 'connect' };
const ABSOLUTE_FORM = /^https?:\/\//i;

function parseTarget(raw: string): Target {
  if (raw.startsWith('/')) return pathTarget(raw, undefined);
  if (raw === '*') return ASTERISK;
  if (ABSOLUTE_FORM.test(raw)) {
    // `http://host[:port][/path][?query]`; Host syntax is checked with the Host header's rules.
    const start = raw.indexOf('//') + 2;
    const length = raw.slice(start).search(/[/?]/);
    const end = length < 0 ? raw.length : start + length;
    // An http URI with an empty host is invalid (RFC 9110 §4.2.1).
    if (end > start)
      return pathTarget(
        raw[end] === '/' ? raw.slice(end) : `/${raw.slice(end)}`,
        raw.slice(start, end),
      );
  }
  return {
    kind: 'invalid',
    error: new HttpError(400, 'bad-target', {
      detail: `Malformed request target ${JSON.stringify(raw.slice(0, 200))}`,
    }),
  };
}

function pathTarget(target: string, authority: string | undefined): Target {
  const q = target.indexOf('?');
  return {
    kind: 'path',
    path: q < 0 ? target : target.slice(0, q),
    query: q < 0 ? '' : target.slice(q),
    authority,
  };
}

/**
 * RFC 9112 §3.2: an HTTP/1.1 request without Host, or any with two, is a 400 (an absolute-form
 * target does not excuse it). HTTP/1.0 may omit it and goes to the default host; HTTP/2 carries
 * `:authority` instead.
 */
function hasOneHost(req: Request): boolean {
  if (req.httpVersionMajor !== 1) return true;
  // Node keeps only the first of repeated Host headers in `headers`; the raw list has them all.
  const raw = req.rawHeaders;
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    // The two usual spellings are compared as they are: lower-casing makes a string each time.
    if (name.length === 4 && (name === 'Host' || name === 'host' || name.toLowerCase() === 'host'))
      count++;
  }
  return count === 1 || (count === 0 && req.httpVersionMinor === 0);
}

/** The host name of a lower-cased, valid authority: no port, no trailing dot. */
export function hostnameOf(host: string): string {
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
