// allow and deny with a real server and clients of several addresses (Linux loopback answers on
// all of 127.0.0.0/8, so a client bound to 127.0.0.2 is another client): an allow-only /admin,
// deny checked before allow, CIDR ranges, a location's rules replacing its host's, and the address
// X-Forwarded-For names from a trusted proxy, as the access log shows it.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startServer, type RunningServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';

const www = mkdtempSync(join(tmpdir(), 'portico-access-list-'));
writeFileSync(join(www, 'index.html'), 'home');
writeFileSync(join(www, '403.html'), 'not for you');
mkdirSync(join(www, 'admin'));
writeFileSync(join(www, 'admin', 'index.html'), 'admin');
after(() => rmSync(www, { recursive: true, force: true }));

const linux = process.platform === 'linux';

/** A GET of `path` from a client bound to `address`: its status and body. */
function getFrom(
  port: number,
  address: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    request(
      { host: '127.0.0.1', port, path, headers, localAddress: address, agent: false },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, text }));
      },
    )
      .on('error', reject)
      .end();
  });
}

const statusFrom = async (...args: Parameters<typeof getFrom>) => (await getFrom(...args)).status;

async function withServer(yaml: string, test: (s: RunningServer) => Promise<void>): Promise<void> {
  const s = await startServer(`global:\n  wwwroot: ${www}\n${yaml}`);
  try {
    await test(s);
  } finally {
    await s.close();
  }
}

describe(
  'allow and deny',
  { skip: !linux && 'clients of other addresses need Linux loopback' },
  () => {
    it('keeps an allow-only /admin to 127.0.0.1, through errorPages, and leaves the rest open', async () => {
      const config =
        `  errorPages: [{ scode: 403, path: ${join(www, '403.html')} }]\n` +
        'hosts:\n' +
        '  - domain: 127.0.0.1\n' +
        '    locations:\n' +
        '      - path: /admin\n' +
        '        allow: [127.0.0.1]\n';
      await withServer(config, async (s) => {
        assert.equal(await statusFrom(s.port, '127.0.0.1', '/admin/'), 200);
        assert.equal(await statusFrom(s.port, '127.0.0.2', '/admin/'), 403);
        assert.equal(await statusFrom(s.port, '127.0.0.2', '/'), 200);
        assert.equal((await getFrom(s.port, '127.0.0.2', '/admin/')).text, 'not for you');
      });
    });

    it('checks deny before allow, and matches CIDR ranges', async () => {
      const config = '  deny: [127.0.0.2]\n  allow: [127.0.0.0/30]\n';
      await withServer(config, async (s) => {
        // 127.0.0.2 is in the allowed range, but the deny rule comes first.
        assert.equal(await statusFrom(s.port, '127.0.0.2', '/'), 403);
        assert.equal(await statusFrom(s.port, '127.0.0.1', '/'), 200);
        assert.equal(await statusFrom(s.port, '127.0.0.3', '/'), 200);
        // Outside the /30: no rule matches, and allow is present.
        assert.equal(await statusFrom(s.port, '127.0.0.4', '/'), 403);
      });
    });

    it('lets a location’s rules replace both lists of its host, as nginx', async () => {
      const config =
        'hosts:\n' +
        '  - domain: 127.0.0.1\n' +
        '    deny: [127.0.0.2]\n' +
        '    locations:\n' +
        '      - path: /admin\n' +
        '        allow: [127.0.0.2]\n' +
        '      - path: /index.html\n' +
        '        allow: []\n';
      await withServer(config, async (s) => {
        assert.equal(await statusFrom(s.port, '127.0.0.2', '/'), 403);
        // An empty list sets no rule, and drops the host's.
        assert.equal(await statusFrom(s.port, '127.0.0.2', '/index.html'), 200);
        // The host's deny is not inherited by a location with rules of its own.
        assert.equal(await statusFrom(s.port, '127.0.0.2', '/admin/'), 200);
        assert.equal(await statusFrom(s.port, '127.0.0.1', '/admin/'), 403);
      });
    });

    it('decides by the address X-Forwarded-For names from a trusted proxy, the one the access log shows', async () => {
      const log = join(www, `access-${process.pid}.log`);
      const config =
        `  logFilePath: ${log}\n` +
        '  enableIPSpoofing: true\n' +
        '  trustedProxies: [127.0.0.1]\n' +
        '  allow: [198.51.100.0/24]\n';
      await withServer(config, async (s) => {
        const from = (client: string) => ({ 'X-Forwarded-For': client });
        assert.equal(await statusFrom(s.port, '127.0.0.1', '/', from('198.51.100.7')), 200);
        assert.equal(await statusFrom(s.port, '127.0.0.1', '/', from('203.0.113.9')), 403);
        // The proxy itself is not allowed, and what an untrusted peer forges is not believed.
        assert.equal(await statusFrom(s.port, '127.0.0.1', '/'), 403);
        assert.equal(await statusFrom(s.port, '127.0.0.2', '/', from('198.51.100.7')), 403);
        const lines = await until(
          () => readFileSync(log, 'utf8').trimEnd().split('\n').filter(Boolean),
          { ok: (l) => l.length === 4, what: 'four access log lines' },
        );
        assert.deepEqual(
          lines.map((l) => `${l.split(' ')[0]} ${/" (\d{3}) /.exec(l)?.[1]}`),
          ['198.51.100.7 200', '203.0.113.9 403', '127.0.0.1 403', '127.0.0.2 403'],
        );
      });
    });
  },
);
