// The proxy stage: the backend list for the connection's scheme, one attempt per backend at most,
// the next one only when the connection failed before the request started (its body still
// untouched), and the failure mapped to 502/503/504 otherwise.
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Ctx } from '../../http/ctx.js';
import type { Logger } from '../../http/logger.js';
import { HttpError } from '../../http/http-error.js';
import type { Stage } from '../../http/stage.js';
import { backendPath, type Backend } from '../../upstream/backend.js';
import { chooseBackend, type HealthPolicy } from '../../upstream/choice.js';
import { isConnectFailure, upstreamError } from '../../upstream/failures.js';
import { discardRest, hasBody, RequestBody } from '../../upstream/request-body.js';
import { forwardedHeaders } from '../../upstream/request-headers.js';
import { exchange, type ExchangeFailure } from '../../upstream/exchange.js';
import type { Upstream } from '../../upstream/pools.js';

const WEBSOCKET = /^websocket$/i;

export interface ProxyRoute {
  readonly backends: readonly Backend[];
  readonly upstreams: ReadonlyMap<Backend, Upstream>;
}

export interface ProxySetup {
  /** `proxyTo`; undefined: plain-HTTP requests pass on. */
  readonly plain: ProxyRoute | undefined;
  /** `secureProxyTo`, else `proxyTo`: for requests over TLS. */
  readonly secure: ProxyRoute | undefined;
  readonly health: HealthPolicy | undefined;
  readonly interceptErrors: boolean;
  readonly xForwarded: boolean;
  readonly errorLog: Logger;
}

/** What every attempt at one request sends, whichever backend it goes to. */
interface ProxiedRequest {
  readonly route: ProxyRoute;
  /** 'websocket' for a WebSocket handshake, else undefined. */
  readonly upgrade: string | undefined;
  /** An HTTP/2 extended CONNECT (RFC 8441) asking for a WebSocket. */
  readonly extended: boolean;
  /** The client's body, when it has one to send. */
  readonly body: Readable | undefined;
}

export function proxyStage(setup: ProxySetup): Stage {
  const intercept = (status: number) => setup.interceptErrors && status >= 400;

  // No promise of its own per request, and the set of tried backends only once one failed.
  const attempt = (ctx: Ctx, request: ProxiedRequest, tried?: Set<Backend>): Promise<void> => {
    const { route, body } = request;
    const backend = chooseBackend(route.backends, tried, setup.health)!;
    const requestBody = body && new RequestBody(body);
    const headers = forwardedHeaders(ctx, {
      authority: backend.authority,
      xForwarded: setup.xForwarded,
    });
    const upstream = route.upstreams.get(backend)!;
    upstream.counts.requests++;
    const sent = exchange(ctx, upstream, backend, {
      path: backendPath(backend, ctx.path, ctx.query),
      headers: request.extended ? withKey(headers) : headers,
      body: requestBody,
      keep: intercept,
      earlyHints: true,
      errorLog: setup.errorLog,
      upgrade: request.upgrade,
    });
    return sent.then(
      (kept) => {
        requestBody?.destroy();
        // proxyInterceptErrors: the backend's error goes to the error responder, its page dropped.
        if (kept) throw new HttpError(kept.status, 'upstream-status');
      },
      ({ error, started }: ExchangeFailure) => {
        upstream.counts.errors++;
        const connectFailed = !started && isConnectFailure(error);
        if (connectFailed && setup.health) setup.health.book.failed(backend, setup.health.windowMs);
        const triedNow = tried ?? new Set<Backend>();
        triedNow.add(backend);
        requestBody?.destroy();
        if (connectFailed && triedNow.size < route.backends.length && !requestBody?.consumed) {
          setup.errorLog.log(
            `[${upstreamError(backend, error).code}] proxy to ${backend.shown}: ${(error as Error).message}; trying another backend`,
          );
          return attempt(ctx, request, triedNow);
        }
        throw upstreamError(backend, error);
      },
    );
  };

  return (ctx, next) => {
    const route = ctx.scheme === 'https' ? setup.secure : setup.plain;
    if (route === undefined) return next(ctx);
    // A WebSocket handshake goes to the backend first; only its own 101 is relayed (CONTRACT point 10).
    const extended =
      ctx.method === 'CONNECT' && WEBSOCKET.test(String(ctx.req.headers[':protocol']));
    const upgrade =
      extended || (ctx.upgrade && WEBSOCKET.test(String(ctx.req.headers.upgrade)))
        ? 'websocket'
        : undefined;
    const body = upgrade === undefined && hasBody(ctx.req) ? ctx.body : undefined;
    const done = attempt(ctx, { route, upgrade, extended, body });
    return body ? done.finally(() => discardRest(body)) : done;
  };
}

/**
 * An HTTP/2 WebSocket carries no Sec-WebSocket-Key (RFC 8441 §5); the HTTP/1.1 handshake toward
 * the backend needs one (RFC 6455 §4.1), so the proxy makes it.
 */
function withKey(headers: string[]): string[] {
  headers.push('sec-websocket-key', randomBytes(16).toString('base64'));
  return headers;
}
