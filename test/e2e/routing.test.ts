// Hosts and locations as a user meets them: real server, real sockets, real HTTP clients.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { raw, request } from '../helpers/http.js';
import { startServer, type RunningServer } from '../helpers/server.js';

const get = async (port: number, path: string, headers: Record<string, string>) => {
  const r = await request(port, path, { headers });
  return { status: r.status, body: r.text };
};

const root = mkdtempSync(join(tmpdir(), 'portico-routing-'));
function site(name: string, files: Record<string, string>): string {
  const dir = join(root, name);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

describe('host and location routing', () => {
  let s: RunningServer;
  before(async () => {
    const dirs = {
      global: site('global', { 'index.html': 'global' }),
      exact: site('exact', { 'index.html': 'exact' }),
      wild: site('wild', { 'index.html': 'wildcard' }),
      deep: site('deep', { 'index.html': 'deep wildcard' }),
      ip: site('ip', { 'index.html': 'exact on 127.0.0.1' }),
      // A location's wwwroot serves the whole path, as nginx's root does: /api/x → <wwwroot>/api/x.
      api: site('api', {
        'api/index.html': 'api location',
        'api/x/index.html': 'api x',
        apix: 'not a location',
      }),
      apiv2: site('apiv2', { 'api/v2/index.html': 'api v2 location' }),
      any: site('any', { 'index.html': 'star' }),
    };
    s = await startServer(`
global:
  wwwroot: ${dirs.global}
hosts:
  - domain: "*.example.com"
    wwwroot: ${dirs.wild}
  - domain: "*.deep.example.com"
    wwwroot: ${dirs.deep}
  - domain: www.example.com
    wwwroot: ${dirs.exact}
    locations:
      - path: /api/
        wwwroot: ${dirs.api}
      - path: /api/v2
        wwwroot: ${dirs.apiv2}
  - domain: both.example.net
    wwwroot: ${dirs.exact}
  - domain: both.example.net
    ip: 127.0.0.1
    wwwroot: ${dirs.ip}
  - domain: "*"
    ip: 127.0.0.2
    wwwroot: ${dirs.any}
`);
  });
  after(async () => {
    await s.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('an exact domain beats a wildcard; names compare case-insensitively; the port is ignored', async () => {
    assert.equal((await get(s.port, '/', { host: 'www.example.com' })).body, 'exact');
    assert.equal((await get(s.port, '/', { host: 'WWW.Example.COM:8080' })).body, 'exact');
    assert.equal((await get(s.port, '/', { host: 'www.example.com.' })).body, 'exact');
  });

  it('a wildcard matches the bare name and any depth; the longer suffix wins', async () => {
    assert.equal((await get(s.port, '/', { host: 'shop.example.com' })).body, 'wildcard');
    assert.equal((await get(s.port, '/', { host: 'example.com' })).body, 'wildcard');
    assert.equal((await get(s.port, '/', { host: 'a.b.example.com' })).body, 'wildcard');
    assert.equal((await get(s.port, '/', { host: 'x.deep.example.com' })).body, 'deep wildcard');
  });

  it('a host matching both domain and ip beats one matching the domain alone', async () => {
    assert.equal((await get(s.port, '/', { host: 'both.example.net' })).body, 'exact on 127.0.0.1');
  });

  it('an ip host matches only connections to that local address', async () => {
    // The server listens on 127.0.0.1 only, so the 127.0.0.2 host never applies here.
    assert.equal((await get(s.port, '/', { host: 'unknown.test' })).body, 'global');
  });

  it('no match, and no Host at all, fall back to the global configuration', async () => {
    assert.equal((await get(s.port, '/', { host: 'other.test' })).body, 'global');
    const http10 = await raw(s.port, 'GET / HTTP/1.0\r\n\r\n');
    assert.match(http10, /^HTTP\/1\.1 200 OK/);
    assert.match(http10, /\r\n\r\nglobal$/);
  });

  it('the longest location prefix wins, at a segment boundary', async () => {
    const h = { host: 'www.example.com' };
    assert.equal((await get(s.port, '/api/', h)).body, 'api location');
    assert.equal((await get(s.port, '/api/x/', h)).body, 'api x');
    assert.equal((await get(s.port, '/api/v2/', h)).body, 'api v2 location');
    assert.equal(
      (await get(s.port, '/%61pi/v2/', h)).body,
      'api v2 location',
      'locations match the decoded path',
    );
    assert.equal((await get(s.port, '/apix', h)).status, 404, '/apix is not under /api');
    assert.equal((await get(s.port, '/', h)).body, 'exact');
  });
});

describe('ip hosts on a dual-stack listener', () => {
  let s: RunningServer;
  before(async () => {
    const v4 = site('v4', { 'index.html': 'IPv4 loopback host' });
    const v6 = site('v6', { 'index.html': 'IPv6 loopback host' });
    const fallback = site('fallback', { 'index.html': 'global' });
    s = await startServer(
      `
global:
  wwwroot: ${fallback}
hosts:
  - ip: 127.0.0.1
    wwwroot: ${v4}
  - ip: "::1"
    wwwroot: ${v6}
`,
      { allAddresses: true },
    );
  });
  after(() => s.close());

  it('matches the local address a connection arrived on, IPv4-mapped addresses normalised', async () => {
    assert.equal((await get(s.port, '/', { host: 'any.test' })).body, 'IPv4 loopback host');
    const v6 = await new Promise<string>((resolve, reject) => {
      const req = httpRequest(
        { host: '::1', port: s.port, path: '/', headers: { host: 'any.test' }, agent: false },
        (res) => {
          let body = '';
          res
            .setEncoding('utf8')
            .on('data', (d: string) => (body += d))
            .on('end', () => resolve(body));
        },
      );
      req.on('error', reject).end();
    });
    assert.equal(v6, 'IPv6 loopback host');
  });
});

describe('listen addresses', () => {
  it('binds "[IPv6]:port"', async () => {
    const dir = site('v6only', { 'index.html': 'on ::1' });
    const s = await startServer(`global:\n  wwwroot: ${dir}\n`, {
      listen: (port) => `[::1]:${port}`,
    });
    try {
      assert.deepEqual(s.server.listenerUrls, [`http://[::1]:${s.port}`]);
      const body = await new Promise<string>((resolve, reject) => {
        httpRequest({ host: '::1', port: s.port, path: '/', agent: false }, (res) => {
          let text = '';
          res
            .setEncoding('utf8')
            .on('data', (d: string) => (text += d))
            .on('end', () => resolve(text));
        })
          .on('error', reject)
          .end();
      });
      assert.equal(body, 'on ::1');
      await assert.rejects(request(s.port, '/'), /ECONNREFUSED/, 'not on IPv4');
    } finally {
      await s.close();
    }
  });

  it('refuses to start with a module this build does not have, naming it', async () => {
    await assert.rejects(
      // A build whose registry leaves the module out.
      startServer('global:\n  loadModules: [asgi]\n', { modules: [] }),
      /module "asgi" \(loadModules\) is not available in this build/,
    );
  });
});
