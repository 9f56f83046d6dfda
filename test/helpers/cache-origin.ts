// A real node:http origin and Portico's `cache` in front of it (`loadModules: [cache, rproxy]`), as
// the cache's end-to-end tests use them.
import { once } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';
import { request, type Reply } from './http.js';
import { startServer, type RunningServer } from './server.js';

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export interface Origin {
  readonly url: string;
  /** Requests as the origin saw them. */
  readonly seen: { method: string; url: string; headers: http.IncomingHttpHeaders }[];
  /** How many requests for `path` reached the origin. */
  hits(path: string): number;
  close(): Promise<void>;
}

export async function origin(t: TestContext, handler: Handler): Promise<Origin> {
  const seen: Origin['seen'] = [];
  const server = http.createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    handler(req, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  let closed = false;
  const close = () => {
    if (closed) return Promise.resolve();
    closed = true;
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  t.after(close);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    hits: (path) => seen.filter((r) => r.url === path).length,
    close,
  };
}

/** An origin answering every request with `headers` and a body naming the request and its number. */
export function fixed(headers: Record<string, string | string[]>, status = 200): Handler {
  let n = 0;
  return (req, res) => {
    n++;
    const body = `${req.method} ${req.url} #${n}`;
    res.writeHead(status, { 'Content-Type': 'text/plain', 'X-Count': String(n), ...headers });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
}

export async function cachingProxy(
  t: TestContext,
  o: Origin | string,
  extra = '',
): Promise<RunningServer> {
  const url = typeof o === 'string' ? o : o.url;
  const s = await startServer(
    `global:\n  loadModules: [cache, rproxy]\n  proxyTo: ${url}\n${extra}`,
  );
  t.after(() => s.close());
  return s;
}

export function get(s: RunningServer, path: string, headers: Record<string, string> = {}) {
  return request(s.port, path, { headers: { host: 'localhost', ...headers } });
}

export const status = (r: Reply) => String(r.headers['cache-status']);
