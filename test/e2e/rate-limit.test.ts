// rateLimit with a real server and real clients: the rate a steady client gets over 3 s, the 429's
// Retry-After and IETF fields through errorPages, a host's and a location's limits on one request,
// buckets by API key, and clients of other addresses (Linux loopback answers on all of
// 127.0.0.0/8: a client bound to 127.0.0.2 is another client) untouched by one client's bucket.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import { startServer, type RunningServer } from '../helpers/server.js';

const www = mkdtempSync(join(tmpdir(), 'portico-rate-limit-'));
writeFileSync(join(www, 'index.html'), 'hello');
writeFileSync(join(www, '429.html'), 'slow down, please');
for (const dir of ['tight', 'other']) {
  mkdirSync(join(www, dir));
  writeFileSync(join(www, dir, 'index.html'), dir);
}
after(() => rmSync(www, { recursive: true, force: true }));

const linux = process.platform === 'linux';

interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
}

interface From {
  /** The client's own address (127.0.0.1 unless said). */
  readonly address?: string;
  readonly headers?: Record<string, string>;
  /** A kept-alive connection to send on. */
  readonly agent?: Agent;
}

function get(port: number, path: string, from: From = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    request(
      {
        host: '127.0.0.1',
        port,
        path,
        headers: from.headers,
        localAddress: from.address ?? '127.0.0.1',
        agent: from.agent ?? false,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
      },
    )
      .on('error', reject)
      .end();
  });
}

/** The statuses of `count` requests in a row. */
async function statuses(port: number, path: string, count: number, from: From = {}) {
  const out: number[] = [];
  for (let i = 0; i < count; i++) out.push((await get(port, path, from)).status);
  return out;
}

async function withServer(yaml: string, test: (s: RunningServer) => Promise<void>): Promise<void> {
  const s = await startServer(`global:\n  wwwroot: ${www}\n${yaml}`);
  try {
    await test(s);
  } finally {
    await s.close();
  }
}

describe('rateLimit', { skip: !linux && 'clients of other addresses need Linux loopback' }, () => {
  it('lets a steady client through at the configured rate over 3 s, the rest 429 with the fields', async () => {
    const config =
      '  rateLimit: { requests: 10, per: 1s, burst: 5 }\n' +
      `  errorPages: [{ scode: 429, path: ${join(www, '429.html')} }]\n`;
    await withServer(config, async (s) => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      const answers: Answer[] = [];
      const first = performance.now();
      let last = first;
      // Fifty requests a second, five times the rate, one at a time on one connection.
      while (performance.now() - first < 3000) {
        last = performance.now();
        answers.push(await get(s.port, '/', { agent }));
        await sleep(20);
      }
      agent.destroy();
      const accepted = answers.filter((a) => a.status === 200).length;
      // The burst, then one token per 100 ms over the time between the first and the last request.
      // Each end of that span is read by the client a moment apart from the server's clock (the
      // request's trip and a loaded event loop); two tokens either way is 200 ms of such slack.
      const expected = 5 + 10 * ((last - first) / 1000);
      assert.ok(
        Math.abs(accepted - expected) <= 2,
        `${accepted} accepted of ${answers.length}, ${expected.toFixed(1)} expected`,
      );
      const refused = answers.filter((a) => a.status !== 200);
      assert.ok(refused.length > 60, `${refused.length} refused`);
      for (const r of refused) {
        assert.equal(r.status, 429);
        // A token comes back every 100 ms: the next is at most a second away, rounded up.
        assert.equal(r.headers['retry-after'], '1');
        assert.equal(r.headers['ratelimit-policy'], '"global-0";q=10;w=1');
        assert.equal(r.headers['ratelimit'], '"global-0";r=0;t=1');
        // Through the error path: the configured page.
        assert.equal(r.text, 'slow down, please');
      }
      // Allowed responses carry neither field.
      const allowed = answers.find((a) => a.status === 200)!;
      assert.equal(allowed.headers['ratelimit'], undefined);
      assert.equal(allowed.headers['ratelimit-policy'], undefined);
    });
  });

  it('applies a host’s limit and a location’s to one request, the host’s bucket shared by its locations', async () => {
    const config =
      'hosts:\n' +
      '  - domain: 127.0.0.1\n' +
      '    rateLimit: { requests: 1, per: 1h, burst: 4 }\n' +
      '    locations:\n' +
      '      - path: /tight\n' +
      '        rateLimit: [{ requests: 1, per: 1h, burst: 2 }]\n' +
      '      - path: /other\n' +
      '        enableETag: false\n';
    await withServer(config, async (s) => {
      assert.deepEqual(await statuses(s.port, '/tight/', 3), [200, 200, 429]);
      const byLocation = await get(s.port, '/tight/');
      assert.equal(byLocation.headers['ratelimit-policy'], '"location-0";q=1;w=3600');
      // The location refused those without taking from the host: two of its four are left, for
      // any location of the host.
      assert.deepEqual(await statuses(s.port, '/other/', 1), [200]);
      assert.deepEqual(await statuses(s.port, '/', 2), [200, 429]);
      const byHost = await get(s.port, '/other/');
      assert.equal(byHost.status, 429);
      assert.equal(byHost.headers['ratelimit-policy'], '"host-0";q=1;w=3600');
      // A token comes back in an hour.
      assert.ok(Number(byHost.headers['retry-after']) > 3500, byHost.headers['retry-after']);
    });
  });

  it('keeps a bucket per X-Api-Key, and one per address for requests without it', async () => {
    const config =
      '  rateLimit:\n    - { requests: 1, per: 1h, burst: 2, key: "header:X-Api-Key" }\n';
    await withServer(config, async (s) => {
      const key = (value: string) => ({ headers: { 'X-Api-Key': value } });
      assert.deepEqual(await statuses(s.port, '/', 3, key('alice')), [200, 200, 429]);
      assert.deepEqual(await statuses(s.port, '/', 3, key('bob')), [200, 200, 429]);
      // Without the header the client's address is the key: one bucket for 127.0.0.1, another
      // for 127.0.0.2, neither an API key's.
      assert.deepEqual(await statuses(s.port, '/', 3), [200, 200, 429]);
      assert.deepEqual(await statuses(s.port, '/', 3, { address: '127.0.0.2' }), [200, 200, 429]);
      assert.deepEqual(await statuses(s.port, '/', 1, key('carol')), [200]);
    });
  });

  it('does not limit a client by another address’s bucket, and keeps buckets across a reload', async () => {
    const config = '  rateLimit: { requests: 1, per: 1h, burst: 2 }\n';
    await withServer(config, async (s) => {
      assert.deepEqual(await statuses(s.port, '/', 3), [200, 200, 429]);
      assert.deepEqual(await statuses(s.port, '/', 3, { address: '127.0.0.2' }), [200, 200, 429]);
      assert.deepEqual(await statuses(s.port, '/', 1, { address: '127.0.0.3' }), [200]);
      // The same limit in the reloaded file: the same buckets.
      s.rewrite(`global:\n  wwwroot: ${www}\n${config}`);
      assert.equal((await s.server.reloadFromSource()).ok, true);
      assert.deepEqual(await statuses(s.port, '/', 1), [429]);
      // Another limit: buckets of its own.
      s.rewrite(`global:\n  wwwroot: ${www}\n  rateLimit: { requests: 2, per: 1h }\n`);
      assert.equal((await s.server.reloadFromSource()).ok, true);
      assert.deepEqual(await statuses(s.port, '/', 3), [200, 200, 429]);
    });
  });
});
