// Failed logins must not grow memory: brute-force records are bounded and nothing else may keep a
// trace of a refused attempt. A file of its own, so the process has not run Argon2 before: glibc
// keeps freed 19 MiB Argon2 blocks' worth of address space around in ways that make RSS swing by
// tens of MB, which would drown what is measured here.
import assert from 'node:assert/strict';
import { pbkdf2Sync, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { startServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';

const b64 = (b: Buffer) => b.toString('base64').replace(/=+$/, '');
const salt = randomBytes(16);
const PHC = `$pbkdf2-sha256$i=1000,l=32$${b64(salt)}$${b64(pbkdf2Sync('right', salt, 1000, 32, 'sha256'))}`;
const MB = 1024 * 1024;

// The measurement is of this whole process (server and client); a forced collection takes the
// garbage of the run out of the comparison.
function collect(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

// Collections a few hundred ms apart until RSS stops falling, before each reading: the pages a
// run freed go back to the system late (V8's sweeper, the compiler threads' malloc arenas), and
// one collection 200 ms after the run left RSS 24–48 MB up in most runs on a 2-core machine with
// no trend over further runs (heapUsed +0.5 MB); read after this, both readings are of a settled
// process.
async function settled(): Promise<NodeJS.MemoryUsage> {
  let previous: number | undefined;
  let falling = true;
  return until(
    () => {
      collect();
      const memory = process.memoryUsage();
      falling = previous === undefined || memory.rss < previous - MB;
      previous = memory.rss;
      return memory;
    },
    { ok: () => !falling, every: 300, what: 'RSS to stop falling' },
  );
}

it('10,000 failed logins from 1,000 addresses leave RSS within 20 MB', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'portico-auth-memory-'));
  // The error log goes to a file: the test server's captured stderr would grow with every line.
  const s = await startServer(`
global:
  errorLogFilePath: ${join(dir, 'error.log')}
  enableIPSpoofing: true
  users: [{ name: bob, pass: "${PHC}" }]
  nonStandardCodes:
    - scode: 401
      regex: "^/private/"
`);
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  // Attempt i comes from address i % 1000 of the /16 `net`.
  const fail = (net: string, i: number) =>
    new Promise<number>((resolve, reject) => {
      const client = `${net}.${(i % 1000) >> 8}.${(i % 1000) & 255}`;
      const headers = {
        'X-Forwarded-For': client,
        Authorization: `Basic ${Buffer.from(`bob:wrong${i}`).toString('base64')}`,
      };
      request(
        { host: '127.0.0.1', port: s.port, path: '/private/file.txt', headers, agent },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      )
        .on('error', reject)
        .end();
    });
  const run = async (net: string, count: number): Promise<Set<number>> => {
    const statuses = new Set<number>();
    for (let next = 0; next < count;) {
      const batch = Array.from({ length: Math.min(64, count - next) }, (_, k) =>
        fail(net, next + k),
      );
      next += batch.length;
      for (const status of await Promise.all(batch)) statuses.add(status);
    }
    return statuses;
  };
  try {
    // Warm-up from other addresses, long enough for V8 to settle its heap size under this load.
    await run('172.17', 5000);
    const before = await settled();
    const statuses = await run('172.16', 10_000);
    const after = await settled();
    assert.deepEqual(
      statuses,
      new Set([401]),
      'exactly 10 failures per address: all counted, none locked out yet',
    );
    const grown = (key: 'rss' | 'heapUsed') => `${((after[key] - before[key]) / MB).toFixed(1)} MB`;
    assert.ok(after.rss - before.rss < 20 * MB, `RSS grew ${grown('rss')}`);
    // The sharper check: live objects, which RSS only shows through V8's and malloc's page handling.
    assert.ok(after.heapUsed - before.heapUsed < 4 * MB, `heap grew ${grown('heapUsed')}`);
  } finally {
    agent.destroy();
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
