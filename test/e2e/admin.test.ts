// The admin API as an operator and an attacker meet it: every row of SPEC-admin-api.md's tables
// and CONTRACT.md's wire format, the five profiles, reload and shutdown.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadConfigText } from '../../src/config/load.js';
import { heldResponse, isRefused, request } from '../helpers/http.js';
import { freePort, startServer, type RunningServer } from '../helpers/server.js';
import { logged, until } from '../helpers/wait.js';

const root = mkdtempSync(join(tmpdir(), 'portico-admin-'));
const www = join(root, 'www');
const other = join(root, 'other');
mkdirSync(www);
mkdirSync(other);
writeFileSync(join(www, 'index.html'), 'first');
writeFileSync(join(other, 'index.html'), 'second');
writeFileSync(join(www, 'big.bin'), Buffer.alloc(16 * 1024 * 1024, 1));
after(() => rmSync(root, { recursive: true, force: true }));

interface AdminReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: Record<string, unknown>;
}

async function admin(
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string> } = {},
): Promise<AdminReply> {
  const r = await request(port, path, options);
  return {
    status: r.status,
    headers: r.headers,
    json: r.text ? (JSON.parse(r.text) as Record<string, unknown>) : {},
  };
}

async function withAdmin(
  block: string,
  run: (s: RunningServer, adminPort: number) => Promise<void>,
  extra = '',
): Promise<void> {
  const adminPort = await freePort();
  const s = await startServer(
    `global:\n  wwwroot: ${www}\n  admin:\n    listen: "127.0.0.1:${adminPort}"\n${block}${extra}`,
  );
  try {
    await run(s, adminPort);
  } finally {
    await s.close();
  }
}

const profiles: [string, string, Record<string, boolean>][] = [
  [
    'secure default (directives left out)',
    '',
    { health: true, status: false, config: false, reload: true, reload_get: true, runtime: true },
  ],
  [
    'health probe only',
    '    health: true\n    reload: false\n    reload_get: false\n    runtime: false\n',
    {
      health: true,
      status: false,
      config: false,
      reload: false,
      reload_get: false,
      runtime: false,
    },
  ],
  [
    'read-only operator',
    '    status: true\n    config: true\n    reload: false\n    reload_get: false\n    runtime: false\n',
    { health: true, status: true, config: true, reload: false, reload_get: false, runtime: false },
  ],
  [
    'full-control operator',
    '    health: true\n    status: true\n    config: true\n    reload: true\n    reload_get: true\n    runtime: true\n',
    { health: true, status: true, config: true, reload: true, reload_get: true, runtime: true },
  ],
  [
    'recovery after binding to a public address',
    '    health: true\n    status: false\n    config: false\n    reload: true\n    reload_get: false\n    runtime: false\n',
    { health: true, status: false, config: false, reload: true, reload_get: false, runtime: false },
  ],
];

const ENDPOINTS: [string, string, string][] = [
  ['health', 'GET', '/health'],
  ['status', 'GET', '/status'],
  ['config', 'GET', '/config'],
  ['reload', 'POST', '/reload'],
  ['reload_get', 'GET', '/reload'],
  ['runtime', 'GET', '/runtime'],
];

describe('profiles', () => {
  for (const [name, block, expected] of profiles) {
    it(name, () =>
      withAdmin(block, async (_s, port) => {
        for (const [directive, method, path] of ENDPOINTS) {
          const r = await admin(port, path, { method });
          if (expected[directive]) assert.equal(r.status, 200, `${method} ${path}`);
          else
            assert.deepEqual(
              [r.status, r.json],
              [404, { error: 'endpoint disabled' }],
              `${method} ${path}`,
            );
          assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
          assert.equal(r.headers['cache-control'], 'no-store');
          assert.equal(r.headers['access-control-allow-origin'], undefined);
        }
      }),
    );
  }
});

describe('endpoints', () => {
  it('answer with the wire format of CONTRACT.md', () =>
    withAdmin('    status: true\n    config: true\n', async (s, port) => {
      assert.deepEqual((await admin(port, '/health')).json, { status: 'ok' });
      await request(s.port, '/');
      const status = (await admin(port, '/status')).json;
      assert.equal(status.status, 'ok');
      assert.equal(
        status.version,
        JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version,
      );
      assert.equal(typeof status.uptime_sec, 'number');
      assert.ok(!Number.isNaN(Date.parse(status.started_at as string)));
      assert.equal(typeof status.connections_active, 'number');
      assert.ok((status.requests_total as number) >= 1);
      assert.equal(status.reloads, 0);
      assert.equal(status.last_reload, null);
      assert.deepEqual(status.listeners, [`http://127.0.0.1:${s.port}`]);
      const runtime = (await admin(port, '/runtime')).json as Record<
        string,
        Record<string, unknown>
      >;
      assert.equal(runtime.node as unknown, process.version);
      assert.equal(runtime.pid as unknown, process.pid);
      assert.equal(runtime.platform as unknown, process.platform);
      assert.equal(runtime.arch as unknown, process.arch);
      for (const k of ['rss', 'heap_used', 'heap_total', 'external'])
        assert.equal(typeof runtime.memory![k], 'number');
      for (const k of ['user_ms', 'system_ms']) assert.equal(typeof runtime.cpu![k], 'number');
      const u = runtime.event_loop!.utilization as number;
      assert.ok(u >= 0 && u <= 1, `utilization ${u}`);
      assert.ok((runtime.event_loop!.delay_p99_ms as number) >= 0);
      assert.equal(typeof runtime.uptime_sec, 'number');
    }));

  it('unknown path 404, wrong method 405 with Allow, disabled endpoint 404 whatever the method', () =>
    withAdmin('    reload_get: false\n', async (_s, port) => {
      assert.deepEqual(
        [(await admin(port, '/nope')).status, (await admin(port, '/nope')).json],
        [404, { error: 'not found' }],
      );
      const wrong = await admin(port, '/health', { method: 'POST' });
      assert.deepEqual(
        [wrong.status, wrong.json, wrong.headers.allow],
        [405, { error: 'method not allowed' }, 'GET, HEAD'],
      );
      const put = await admin(port, '/reload', { method: 'PUT' });
      assert.deepEqual([put.status, put.headers.allow], [405, 'POST']);
      assert.deepEqual((await admin(port, '/reload')).json, { error: 'endpoint disabled' });
      assert.equal((await admin(port, '/status', { method: 'DELETE' })).status, 404);
    }));

  it('/config shows the effective configuration, every secret redacted', () =>
    withAdmin(
      '    config: true\n    auth_token: tok-123\n',
      async (_s, port) => {
        const config = (
          await admin(port, '/config', { headers: { authorization: 'Bearer tok-123' } })
        ).json as { global: Record<string, unknown>; hosts: Record<string, unknown>[] };
        const text = JSON.stringify(config);
        for (const secret of [
          'tok-123',
          's3cret-pass',
          'cookie-value',
          'Basic abc',
          'hunter2',
          '/etc/keys/server.key',
          '/etc/keys/sni.key',
        ])
          assert.ok(!text.includes(secret), secret);
        assert.equal((config.global.admin as Record<string, unknown>).auth_token, '[redacted]');
        assert.equal(config.global.timeout, 300000, 'global defaults filled in');
        const host = config.hosts[0]!;
        assert.deepEqual(host.users, [{ name: 'alice', pass: '[redacted]' }]);
        assert.deepEqual(host.customHeaders, {
          Authorization: '[redacted]',
          Cookie: '[redacted]',
          'X-Visible': 'yes',
        });
        assert.deepEqual(host.proxyTo, [
          'http://[redacted]@127.0.0.1:3000',
          'http://127.0.0.1:3001',
        ]);
        assert.equal(host.domain, 'site.test', 'routing stays visible');
      },
      `hosts:
  - domain: site.test
    users:
      - name: alice
        pass: s3cret-pass
    customHeaders:
      Authorization: Basic abc
      Cookie: cookie-value
      X-Visible: "yes"
    proxyTo: [http://user:hunter2@127.0.0.1:3000, http://127.0.0.1:3001]
`,
    ));
});

describe('authentication', () => {
  it('with auth_token, every path needs the bearer token, /health included', () =>
    withAdmin('    auth_token: "correct horse"\n', async (s, port) => {
      for (const headers of [
        {},
        { authorization: 'Bearer wrong' },
        { authorization: 'Basic Y29ycmVjdCBob3JzZQ==' },
        { authorization: 'Bearer correct hors' },
      ] as Record<string, string>[]) {
        for (const path of ['/health', '/nope', '/reload']) {
          const r = await admin(port, path, { headers });
          assert.deepEqual(
            [r.status, r.json, r.headers['www-authenticate']],
            [401, { error: 'unauthorized' }, 'Bearer realm="admin"'],
            `${path} ${JSON.stringify(headers)}`,
          );
        }
      }
      assert.equal(
        (await admin(port, '/health', { headers: { authorization: 'Bearer correct horse' } }))
          .status,
        200,
      );
      // The scheme name is case-insensitive (RFC 9110 §11.1); the token is not.
      assert.equal(
        (await admin(port, '/health', { headers: { authorization: 'bearer  correct horse' } }))
          .status,
        200,
      );
      assert.equal(
        (await admin(port, '/health', { headers: { authorization: 'Bearer Correct horse' } }))
          .status,
        401,
      );
      // Fifteen requests, each logged once answered.
      await until(() => s.stderr().split('admin: 127.0.0.1 ').length - 1 >= 15, {
        what: 'every admin request in the log',
      });
      assert.ok(!s.stderr().includes('correct horse'), 'the token never reaches the log');
      assert.match(s.stderr(), /admin: 127\.0\.0\.1 GET \/health 401/);
      assert.match(s.stderr(), /admin: 127\.0\.0\.1 GET \/health 200/);
    }));
});

describe('listen', () => {
  it('takes a bare port number, in YAML and KDL, and binds it on 127.0.0.1', async () => {
    const port = await freePort();
    const s = await startServer(`global:\n  wwwroot: ${www}\n  admin:\n    listen: ${port}\n`);
    try {
      assert.equal((await admin(port, '/health')).status, 200);
    } finally {
      await s.close();
    }
    const kdl = loadConfigText(
      `global {\n    admin {\n        listen 8081\n    }\n}\n`,
      'kdl',
      'portico.kdl',
    );
    assert.deepEqual(kdl.diagnostics, []);
    assert.equal(kdl.config?.global.admin?.listen, 8081);
  });
});

describe('browser attacks', () => {
  it('refuses DNS rebinding, cross-site fetches and foreign origins and referers with 403, before authentication', () =>
    withAdmin('    auth_token: t\n', async (_s, port) => {
      const ok = { authorization: 'Bearer t' };
      for (const headers of [
        { host: 'evil.example' },
        { host: `attacker.test:${port}` },
        { 'sec-fetch-site': 'cross-site' },
        // A page on another port of localhost is same-site; with no Origin or Referer it told
        // nothing else.
        { 'sec-fetch-site': 'same-site' },
        { 'sec-fetch-site': 'anything-else' },
        { origin: 'http://evil.example' },
        { origin: 'null' },
        { origin: `http://127.0.0.1:${port + 1}` },
        // Old browsers send no Sec-Fetch-Site, and an <img> sends no Origin: the Referer tells.
        { referer: 'http://evil.example/page' },
        { referer: `http://127.0.0.1:${port + 1}/` },
        { referer: 'not a url' },
      ] as Record<string, string>[]) {
        const r = await admin(port, '/health', { headers: { ...ok, ...headers } });
        assert.deepEqual(
          [r.status, r.json],
          [403, { error: 'forbidden' }],
          JSON.stringify(headers),
        );
      }
      for (const headers of [
        { host: `localhost:${port}` },
        { host: `127.0.0.1:${port}` },
        { host: 'localhost' },
        { origin: `http://127.0.0.1:${port}` },
        { 'sec-fetch-site': 'same-origin' },
        { 'sec-fetch-site': 'none' },
        { referer: `http://127.0.0.1:${port}/status` },
      ] as Record<string, string>[]) {
        assert.equal(
          (await admin(port, '/health', { headers: { ...ok, ...headers } })).status,
          200,
          JSON.stringify(headers),
        );
      }
    }));
});

describe('reload', () => {
  it('POST /reload swaps a valid configuration in and refuses an invalid one with every diagnostic (422)', () =>
    withAdmin('    status: true\n', async (s, port) => {
      assert.equal((await request(s.port, '/')).text, 'first');
      s.rewrite(
        `global:\n  wwwroot: ${other}\n  admin:\n    listen: "127.0.0.1:${port}"\n    status: true\n`,
      );
      const ok = await admin(port, '/reload', { method: 'POST' });
      assert.deepEqual([ok.status, ok.json], [200, { status: 'reloaded', reloads: 1 }]);
      assert.equal((await request(s.port, '/')).text, 'second');
      s.rewrite(
        `global:\n  wwwroot: ${www}\n  timeout: -1\n  enableHTTP2: 3\n  admin:\n    listen: "127.0.0.1:${port}"\n`,
      );
      const bad = await admin(port, '/reload', { method: 'POST' });
      assert.equal(bad.status, 422);
      assert.equal(bad.json.error, 'invalid configuration');
      const details = bad.json.details as string[];
      assert.equal(details.length, 2);
      assert.match(details[0]!, /portico\.yaml:\d+:\d+: global\.(timeout|enableHTTP2): /);
      assert.equal(
        (await request(s.port, '/')).text,
        'second',
        'the running configuration keeps serving',
      );
      const status = (await admin(port, '/status')).json;
      assert.equal(status.reloads, 1);
      assert.ok(!Number.isNaN(Date.parse(status.last_reload as string)));
    }));

  it('GET /reload reloads too; the admin listener moves with the configuration, and stops when the block goes', () =>
    withAdmin('', async (s, port) => {
      const next = await freePort();
      s.rewrite(`global:\n  wwwroot: ${www}\n  admin:\n    listen: "127.0.0.1:${next}"\n`);
      assert.equal((await admin(port, '/reload')).status, 200);
      await until(() => isRefused(port), { what: `the admin API gone from ${port}` });
      assert.equal((await admin(next, '/health')).status, 200);
      s.rewrite(`global:\n  wwwroot: ${www}\n`);
      assert.equal((await admin(next, '/reload')).status, 200);
      await until(() => isRefused(next), { what: `the admin API gone from ${next}` });
      assert.equal((await request(s.port, '/')).text, 'first');
      // "Stopped permanently": a later reload that brings the block back does not restart it.
      s.rewrite(`global:\n  wwwroot: ${other}\n  admin:\n    listen: "127.0.0.1:${next}"\n`);
      assert.equal((await s.server.reloadFromSource()).ok, true);
      // The restart that would start it again has run once it says so.
      await logged(s.stderr, /admin API not started: an earlier reload removed it/);
      await assert.rejects(admin(next, '/health'), /ECONNREFUSED/);
      assert.equal((await request(s.port, '/')).text, 'second');
    }));

  it('overlapping reloads restart the admin listener one after the other; none is orphaned, and shutdown completes', async () => {
    const adminPort = await freePort();
    const s = await startServer(
      `global:\n  wwwroot: ${www}\n  admin:\n    listen: "127.0.0.1:${adminPort}"\n`,
    );
    const replies = await Promise.all([
      admin(adminPort, '/reload', { method: 'POST' }),
      admin(adminPort, '/reload', { method: 'POST' }),
      admin(adminPort, '/reload'),
    ]);
    assert.deepEqual(
      replies.map((r) => r.status),
      [200, 200, 200],
    );
    assert.equal((await admin(adminPort, '/health')).status, 200);
    // Stopping waits for the restarts under way: after it, each has run and said how it went.
    await s.close();
    await logged(s.stderr, /Portico stopped/);
    assert.doesNotMatch(s.stderr(), /not restarted/);
    await assert.rejects(admin(adminPort, '/health'), /ECONNREFUSED/);
  });

  it('a health check polling through reloads is never refused: the restarted API keeps the bound port', () =>
    withAdmin('', async (_s, port) => {
      // A client in the middle of its request head keeps the previous API draining for a while.
      const { connect } = await import('node:net');
      const slow = connect(port, '127.0.0.1', () =>
        slow.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n'),
      );
      slow.on('error', () => undefined);
      await new Promise((resolve) => slow.once('connect', resolve));
      let polling = true;
      const failures: string[] = [];
      let answered = 0;
      const poller = (async () => {
        while (polling) {
          try {
            const r = await admin(port, '/health');
            if (r.status === 200) answered++;
            else failures.push(String(r.status));
          } catch (e) {
            failures.push((e as Error).message);
          }
        }
      })();
      for (let i = 0; i < 10; i++) {
        assert.equal((await admin(port, '/reload', { method: 'POST' })).status, 200);
        // Each restart meets a health check.
        const seen = answered + failures.length;
        await until(() => answered + failures.length > seen, { what: 'a health answer' });
      }
      polling = false;
      await poller;
      slow.destroy();
      assert.deepEqual(failures, []);
      assert.ok(answered > 10, `${answered} health answers`);
    }));

  it('a request on a connection accepted just before a restart is answered, not dropped', () =>
    withAdmin('    status: true\n', async (_s, port) => {
      const { connect } = await import('node:net');
      const early = connect(port, '127.0.0.1');
      await new Promise((resolve) => early.once('connect', resolve));
      assert.equal((await admin(port, '/reload', { method: 'POST' })).status, 200);
      // The restart ran before this reply was read (the server, in this process, queues it ahead
      // of writing the reply); the connection accepted before it has not sent anything yet.
      let reply = '';
      early.setEncoding('utf8').on('data', (d: string) => (reply += d));
      early.write('GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
      await new Promise((resolve) => early.once('close', resolve));
      assert.match(reply, /^HTTP\/1\.1 200 /);
    }));

  it('a listener that cannot bind fails the whole reload cleanly (500), the old one keeps serving', () =>
    withAdmin('', async (s, port) => {
      const blocker = await startServer(`global:\n  wwwroot: ${www}\n`);
      try {
        // The data listener moves to a port another server holds.
        s.rewrite(
          `global:\n  port: "127.0.0.1:${blocker.port}"\n  wwwroot: ${other}\n  admin:\n    listen: "127.0.0.1:${port}"\n`,
        );
        const r = await admin(port, '/reload', { method: 'POST' });
        assert.equal(r.status, 500);
        assert.equal(r.json.error, 'reload failed');
        assert.match(
          (r.json.details as string[])[0]!,
          new RegExp(
            `cannot listen on http://127\\.0\\.0\\.1:${blocker.port}: the address is already in use`,
          ),
        );
        assert.equal((await request(s.port, '/')).text, 'first');
        assert.equal((await admin(port, '/health')).status, 200);
      } finally {
        await blocker.close();
      }
    }));
});

describe('shutdown', () => {
  it('/health answers 503 while requests drain, then the admin listener goes too', async () => {
    const adminPort = await freePort();
    const s = await startServer(
      `global:\n  wwwroot: ${www}\n  shutdownTimeout: 5000\n  admin:\n    listen: "127.0.0.1:${adminPort}"\n`,
    );
    const download = await heldResponse(s.port, '/big.bin');
    assert.deepEqual((await admin(adminPort, '/health')).json, { status: 'ok' });
    // Draining starts as stop() is called.
    const stopped = s.close();
    const draining = await admin(adminPort, '/health');
    assert.deepEqual([draining.status, draining.json], [503, { status: 'shutting_down' }]);
    assert.deepEqual(await download.finish(), { received: 16 * 1024 * 1024, complete: true });
    await stopped;
    await assert.rejects(admin(adminPort, '/health'), /ECONNREFUSED/);
  });

  it('refuses a reload while draining (503), so nothing new opens behind the shutdown', async () => {
    const adminPort = await freePort();
    const s = await startServer(
      `global:\n  wwwroot: ${www}\n  shutdownTimeout: 5000\n  admin:\n    listen: "127.0.0.1:${adminPort}"\n`,
    );
    const download = await heldResponse(s.port, '/big.bin');
    const stopped = s.close();
    const elsewhere = await freePort();
    s.rewrite(
      `global:\n  port: "127.0.0.1:${elsewhere}"\n  wwwroot: ${www}\n  admin:\n    listen: "127.0.0.1:${adminPort}"\n`,
    );
    const refused = await admin(adminPort, '/reload', { method: 'POST' });
    assert.deepEqual([refused.status, refused.json.error], [503, 'shutting down']);
    assert.deepEqual(
      await download.finish(),
      { received: 16 * 1024 * 1024, complete: true },
      'the download in flight finishes',
    );
    await stopped;
    await assert.rejects(request(elsewhere, '/'), /ECONNREFUSED/);
  });
});
