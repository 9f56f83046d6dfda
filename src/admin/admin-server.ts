// The admin API (SPEC-admin-api.md, wire format in CONTRACT.md): its own plain-HTTP listener with
// health, status, redacted configuration, reload and runtime endpoints. It has the power of a root
// shell, so every request is checked in this order before anything runs: browser attacks (DNS
// rebinding by Host, cross-site fetches by Sec-Fetch-Site and Origin) → the bearer token → the
// path → whether its endpoint is switched on → the method. Every request is audited to the error
// log (never the token, never the query).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import type { ResolvedSettings } from '../config/defaults.js';
import { parseListen } from '../config/formats.js';
import { listenerId } from '../plan/listener-spec.js';
import { bindingOf, Listener } from '../server/listener.js';
import { ProtocolServer, type ConnectionLimits } from '../server/protocol-server.js';
import type { ReloadOutcome } from '../server/reload-from-source.js';

type AdminSettings = NonNullable<ResolvedSettings['admin']>;
type Directive = 'health' | 'status' | 'config' | 'reload' | 'reload_get' | 'runtime' | 'metrics';

/** What the admin API may see and do (admin-api.ts makes it from the Server). */
export interface AdminControl {
  readonly draining: boolean;
  status(): Record<string, unknown> | Promise<Record<string, unknown>>;
  config(): unknown;
  reloadFromSource(): Promise<ReloadOutcome>;
  runtime(): Record<string, unknown> | Promise<Record<string, unknown>>;
  /** Prometheus text exposition. */
  metrics(): Promise<string>;
  log(message: string): void;
}

interface Answer {
  readonly status: number;
  /** JSON, or text as it is (/metrics). */
  readonly body: unknown;
  readonly text?: boolean;
  readonly headers?: Record<string, string>;
}

// path → method → the directive that switches it on
const ROUTES: Record<string, Record<string, Directive>> = {
  '/health': { GET: 'health', HEAD: 'health' },
  '/status': { GET: 'status', HEAD: 'status' },
  '/config': { GET: 'config', HEAD: 'config' },
  '/reload': { POST: 'reload', GET: 'reload_get' },
  '/runtime': { GET: 'runtime', HEAD: 'runtime' },
  '/metrics': { GET: 'metrics', HEAD: 'metrics' },
};

const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';

const LIMITS: ConnectionLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  checkIntervalMs: 2_000,
};
const MAX_CONNECTIONS = 64;

/**
 * One configuration's admin API: the endpoints over a plain HTTP protocol server, on a Listener
 * of its own or, after a reload that keeps the address, on its predecessor's (the port stays
 * bound, so a health check polling through a reload is never refused).
 */
export class AdminServer {
  private readonly protocol: ProtocolServer;
  private listener: Listener | undefined;
  private readonly token: Buffer | undefined;

  constructor(
    readonly settings: AdminSettings,
    private readonly control: AdminControl,
  ) {
    this.token = settings.auth_token === undefined ? undefined : digest(settings.auth_token);
    const parsed = parseListen(this.listen)!;
    // A port alone binds the loopback address, never every address.
    const address = parsed.host ?? '127.0.0.1';
    const id = listenerId(false, address, parsed.port);
    this.protocol = new ProtocolServer(
      { id, key: id, address, port: parsed.port, secure: false },
      (req, res) => void this.handle(req as IncomingMessage, res as ServerResponse),
      LIMITS,
    );
  }

  get listen(): string {
    // A bare port (`listen: 8081`) is a number in YAML and KDL.
    return String(this.settings.listen ?? '127.0.0.1:8081');
  }

  get url(): string | undefined {
    return this.listener?.url;
  }

  /** Binds a listener of its own. */
  async start(): Promise<void> {
    const listener = new Listener(this.protocol, {
      maxConnections: MAX_CONNECTIONS,
      log: (message) => this.control.log(`admin: ${message}`),
    });
    try {
      await listener.start();
    } catch (e) {
      throw new Error(`admin API: ${(e as Error).message}`);
    }
    this.listener = listener;
  }

  /**
   * Takes over `previous`'s listener when it is bound to the same address: new connections come
   * here while the previous configuration's connections finish (at most `graceMs`). False when
   * the address differs; then `previous` must be closed and this one started.
   */
  takeOver(previous: AdminServer, graceMs: number): boolean {
    const listener = previous.listener;
    if (!listener || bindingOf(listener.spec) !== bindingOf(this.protocol.spec)) return false;
    previous.listener = undefined;
    this.listener = listener;
    void listener.replace(this.protocol, graceMs);
    return true;
  }

  /** Lets go of an API that never started nor took over (Node's time-limit timer runs already). */
  discard(): void {
    if (!this.listener) void this.protocol.drain(0);
  }

  /** Stops accepting, then finishes requests in flight (at most `graceMs`). */
  async close(graceMs: number): Promise<void> {
    await this.listener?.close(graceMs);
    this.listener = undefined;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0]!;
    let answer: Answer;
    try {
      answer = await this.answer(req, path);
    } catch (e) {
      this.control.log(`admin: ${path} failed: ${(e as Error).message}`);
      answer = { status: 500, body: { error: 'internal error' } };
    }
    const whole = answer.text ? String(answer.body) : JSON.stringify(answer.body);
    res.writeHead(answer.status, {
      'Content-Type': answer.text ? PROMETHEUS_TEXT : 'application/json; charset=utf-8',
      'Cache-Control': 'no-store',
      'Content-Length': Buffer.byteLength(whole),
      ...answer.headers,
    });
    res.end(req.method === 'HEAD' ? '' : whole);
    this.control.log(
      `admin: ${req.socket.remoteAddress ?? '-'} ${req.method ?? '-'} ${path} ${answer.status}`,
    );
  }

  private async answer(req: IncomingMessage, path: string): Promise<Answer> {
    if (!this.sameSite(req)) return { status: 403, body: { error: 'forbidden' } };
    if (this.token && !this.authorized(req.headers.authorization)) {
      return {
        status: 401,
        body: { error: 'unauthorized' },
        headers: { 'WWW-Authenticate': 'Bearer realm="admin"' },
      };
    }
    const route = ROUTES[path];
    if (!route) return { status: 404, body: { error: 'not found' } };
    const enabled = Object.entries(route).filter(
      ([, directive]) => this.settings[directive] === true,
    );
    if (enabled.length === 0) return { status: 404, body: { error: 'endpoint disabled' } };
    const directive = route[req.method ?? ''];
    if (directive === undefined)
      return {
        status: 405,
        body: { error: 'method not allowed' },
        headers: { Allow: enabled.map(([m]) => m).join(', ') },
      };
    if (this.settings[directive] !== true)
      return { status: 404, body: { error: 'endpoint disabled' } };
    return this.run(directive);
  }

  private async run(directive: Directive): Promise<Answer> {
    switch (directive) {
      case 'health':
        return this.control.draining
          ? { status: 503, body: { status: 'shutting_down' } }
          : { status: 200, body: { status: 'ok' } };
      case 'status':
        return { status: 200, body: await this.control.status() };
      case 'config':
        return { status: 200, body: this.control.config() };
      case 'runtime':
        return { status: 200, body: await this.control.runtime() };
      case 'metrics':
        return { status: 200, body: await this.control.metrics(), text: true };
      case 'reload':
      case 'reload_get': {
        const outcome = await this.control.reloadFromSource();
        return outcome.ok
          ? { status: 200, body: { status: 'reloaded', reloads: outcome.reloads } }
          : { status: outcome.status, body: { error: outcome.error, details: outcome.details } };
      }
    }
  }

  /**
   * Refuses what a web page in the operator's browser could send: a Host that is not an IP
   * literal or localhost (DNS rebinding), a fetch from any other origin (a page on another port of
   * localhost is same-site, and an `<img referrerpolicy="no-referrer">` pointing at `GET /reload`
   * sends neither Origin nor Referer), or an Origin or Referer other than this listener's own (old
   * browsers send no Sec-Fetch-Site). The API sends no CORS headers, so no page can read its answers.
   */
  private sameSite(req: IncomingMessage): boolean {
    const host = req.headers.host;
    if (host !== undefined && !isLocalHostHeader(host)) return false;
    const site = req.headers['sec-fetch-site'];
    // same-origin: the admin API's own page; none: typed in the address bar, or not a browser.
    if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
    const own = host === undefined ? undefined : `http://${host.toLowerCase()}`;
    const { origin, referer } = req.headers;
    if (origin !== undefined && origin.toLowerCase() !== own) return false;
    return referer === undefined || originOf(referer) === own;
  }

  /** Constant time: both sides are hashed to equal lengths first. */
  private authorized(header: string | undefined): boolean {
    // The scheme name is case-insensitive (RFC 9110 §11.1).
    const presented = /^bearer[ \t]+(.*)$/is.exec(header ?? '')?.[1]?.trim();
    return presented !== undefined && timingSafeEqual(digest(presented), this.token!);
  }
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

function isLocalHostHeader(host: string): boolean {
  const lower = host.toLowerCase();
  const name = lower.startsWith('[')
    ? lower.slice(1, lower.indexOf(']'))
    : lower.replace(/:\d+$/, '');
  return name === 'localhost' || isIP(name) !== 0;
}

/** The origin a Referer names (lower case), or undefined when it is not a URL. */
function originOf(referer: string): string | undefined {
  try {
    return new URL(referer).origin.toLowerCase();
  } catch {
    return undefined;
  }
}
