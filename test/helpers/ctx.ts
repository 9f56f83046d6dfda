// A Ctx over a stand-in request and response, for stage tests that need no socket (timing,
// concurrency, one stage's decision). It records what the stage wrote; end-to-end tests use a real
// server (helpers/server.ts).
import { withDefaults } from '../../src/config/defaults.js';
import type { Settings } from '../../src/config/properties.js';
import { Ctx, type Addresses, type Request, type Response } from '../../src/http/ctx.js';
import { HttpError } from '../../src/http/http-error.js';
import { NO_RULES } from '../../src/http/header-rules.js';
import type { Resolved } from '../../src/http/resolved.js';
import type { Stage } from '../../src/http/stage.js';

export interface FakeOptions {
  readonly settings?: Settings;
  readonly method?: string;
  readonly headers?: Record<string, string>;
  /** Percent-encoded path, as the sanitizer leaves it. */
  readonly path?: string;
  /** `?…` or empty. */
  readonly query?: string;
  readonly scheme?: 'http' | 'https';
  /** The Host header; the host name is it without the port. */
  readonly host?: string;
  readonly clientAddress?: string;
}

/** What the stage sent: status, headers as written (flat name/value list), body. */
export interface Written {
  status: number | undefined;
  headers: string[];
  body: Buffer;
  /** The header `name` (any case) as sent, or undefined. */
  header(name: string): string | undefined;
}

export function fakeCtx(options: FakeOptions = {}): { ctx: Ctx; written: Written } {
  const written: Written = {
    status: undefined,
    headers: [],
    body: Buffer.alloc(0),
    header(name) {
      const i = this.headers.findIndex(
        (h, j) => j % 2 === 0 && h.toLowerCase() === name.toLowerCase(),
      );
      return i < 0 ? undefined : this.headers[i + 1];
    },
  };
  const res = {
    headersSent: false,
    destroyed: false,
    writeHead(status: number, headers: string[]) {
      written.status = status;
      written.headers = headers;
      this.headersSent = true;
    },
    end(body?: Buffer | string) {
      if (body !== undefined) written.body = Buffer.from(body);
    },
    destroy() {
      this.destroyed = true;
    },
  };
  const req = {
    method: options.method ?? 'GET',
    headers: options.headers ?? {},
  } as unknown as Request;
  const addresses = {
    remote: options.clientAddress ?? '192.0.2.1',
    remotePort: 50000,
    local: '127.0.0.1',
    localPort: 80,
  };
  return { ctx: routedCtx(req, res as unknown as Response, addresses, options), written };
}

/**
 * A Ctx for a real request on a bare node:http server (the static files rig): its addresses, its
 * Host, its target as the path and query, the settings as its Resolved.
 */
export function ctxFor(
  req: Request,
  res: Response,
  settings: Settings,
  path: string,
  query = '',
): Ctx {
  const socket = req.socket;
  const addresses = {
    remote: socket.remoteAddress ?? '',
    remotePort: socket.remotePort ?? 0,
    local: socket.localAddress ?? '',
    localPort: socket.localPort ?? 0,
  };
  return routedCtx(req, res, addresses, {
    settings,
    path,
    query,
    ...(req.headers.host === undefined ? {} : { host: req.headers.host }),
  });
}

function routedCtx(req: Request, res: Response, addresses: Addresses, options: FakeOptions): Ctx {
  const host = options.host;
  const ctx = new Ctx({
    req,
    res,
    scheme: options.scheme ?? 'http',
    addresses,
    hostHeader: host,
    hostname: host?.replace(/:\d+$/, ''),
  });
  const resolved: Resolved = {
    settings: withDefaults(options.settings ?? {}),
    host: undefined,
    location: undefined,
    headerRules: NO_RULES,
    trustedProxies: undefined,
    errorPages: new Map(),
    readErrorPage: () => Promise.resolve({ problem: 'no error pages in a fake request' }),
    errorConfigs: [],
    errorLog: { log: () => undefined },
    chain: () => undefined,
  };
  ctx.resolved = resolved;
  ctx.path = ctx.originalPath = options.path ?? '/';
  ctx.query = options.query ?? '';
  return ctx;
}

/** Runs one stage: the status it answered or failed with, or 'next' when it passed the request on. */
export async function runStage(stage: Stage, ctx: Ctx, written: Written): Promise<number | 'next'> {
  let passed = false;
  try {
    await stage(ctx, () => void (passed = true));
  } catch (e) {
    if (e instanceof HttpError) return e.status;
    throw e;
  }
  return passed ? 'next' : (written.status ?? 0);
}
