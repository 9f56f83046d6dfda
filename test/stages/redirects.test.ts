// The HTTP → HTTPS redirect's Location. (End to end over real TLS listeners in the HTTPS tests.)
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { withDefaults } from '../../src/config/defaults.js';
import type { Settings } from '../../src/config/properties.js';
import type { Resolved } from '../../src/plan/resolved.js';
import { Ctx, type Request, type Response } from '../../src/server/ctx.js';
import { httpsRedirect } from '../../src/stages/redirects.js';

function run(settings: Settings, scheme: 'http' | 'https', host: string | undefined, path = '/a', query = '?b=1') {
  const written: { status?: number; headers?: string[] } = {};
  const res = {
    headersSent: false,
    writeHead(status: number, headers: string[]) {
      written.status = status;
      written.headers = headers;
    },
    end() {},
  } as unknown as Response;
  const req = { method: 'GET', headers: {} } as unknown as Request;
  const hostname = host?.replace(/:\d+$/, '');
  const ctx = new Ctx(req, res, scheme, Date.now(), '127.0.0.1', 1, '127.0.0.1', 80, host, hostname);
  ctx.resolved = { customHeaders: [], settings: withDefaults(settings) } as unknown as Resolved;
  ctx.path = ctx.originalPath = path;
  ctx.query = query;
  let nextCalled = false;
  const stage = httpsRedirect(withDefaults(settings));
  if (!stage) return 'no stage';
  void stage(ctx, () => void (nextCalled = true));
  if (nextCalled) return 'next';
  const i = written.headers!.indexOf('Location');
  return `${written.status} ${written.headers![i + 1]}`;
}

it('redirects plain HTTP to sport, dropping the port only for 443, keeping path and query', () => {
  const tls = { secure: true, cert: '/c', key: '/k' };
  assert.equal(run({ ...tls, sport: 443 }, 'http', 'example.com:8080'), '301 https://example.com/a?b=1');
  assert.equal(run({ ...tls, sport: 8443 }, 'http', 'example.com'), '301 https://example.com:8443/a?b=1');
  assert.equal(run({ ...tls, sport: '127.0.0.1:9443' }, 'http', 'example.com'), '301 https://example.com:9443/a?b=1');
  assert.equal(run({ ...tls, sport: 8443 }, 'http', '[::1]:80'), '301 https://[::1]:8443/a?b=1');
  assert.equal(run({ ...tls }, 'https', 'example.com'), 'next');
  assert.equal(run({ ...tls, disableToHTTPSRedirect: true }, 'http', 'example.com'), 'no stage');
  assert.equal(run({ ...tls, disableNonEncryptedServer: true }, 'http', 'example.com'), 'no stage');
  assert.equal(run({}, 'http', 'example.com'), 'no stage');
});
