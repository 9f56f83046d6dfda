// rateLimit with `workers: 2`: a limit holds for the server, not for each worker process. A client
// keeps a connection to each worker and spends the bucket through both.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runServing, type ServingCli } from '../helpers/cli.js';
import { connectionPerWorker, via } from '../helpers/worker-connections.js';
import { freePort } from '../helpers/server.js';

const linux = process.platform === 'linux';
const dir = mkdtempSync(join(tmpdir(), 'portico-workers-rate-limit-'));
mkdirSync(join(dir, 'www', 'limited'), { recursive: true });
writeFileSync(join(dir, 'www', 'index.html'), 'home');
writeFileSync(join(dir, 'www', 'limited', 'index.html'), 'limited');
after(() => rmSync(dir, { recursive: true, force: true }));
// A test that fails half-way leaves no server behind: its launcher killed, the primary stops.
const started = new Set<ServingCli>();
after(() => started.forEach((cli) => cli.child.kill('SIGKILL')));

describe('rateLimit with workers: 2', { skip: !linux && 'counts workers on Linux' }, () => {
  it('lets the server as a whole, not each worker, through at the limit', async () => {
    const [port, adminPort] = [await freePort(), await freePort()];
    const file = join(dir, 'portico.yaml');
    writeFileSync(
      file,
      `global:\n  port: "127.0.0.1:${port}"\n  wwwroot: ${join(dir, 'www')}\n  workers: 2\n` +
        `  admin:\n    listen: ${adminPort}\n    status: true\n` +
        'hosts:\n  - domain: 127.0.0.1\n    locations:\n      - path: /limited\n' +
        '        rateLimit: { requests: 1, per: 1h, burst: 6 }\n',
    );
    const cli = await runServing(file);
    started.add(cli);
    // The probes that find each worker ask for / , which no limit counts.
    const [a, b] = await connectionPerWorker(port, adminPort);
    const answers: { worker: string; status: number }[] = [];
    for (let i = 0; i < 8; i++)
      for (const [worker, agent] of [
        ['a', a!],
        ['b', b!],
      ] as const)
        answers.push({ worker, status: (await via(agent, port, '/limited/')).status });
    const allowed = answers.filter((x) => x.status === 200);
    // Six for the server: each worker counting alone would have let twelve through.
    assert.equal(allowed.length, 6, JSON.stringify(answers));
    assert.deepEqual(new Set(allowed.map((x) => x.worker)), new Set(['a', 'b']));
    assert.ok(
      answers.slice(6).every((x) => x.status === 429),
      JSON.stringify(answers),
    );
    const refused = await via(b!, port, '/limited/');
    assert.equal(refused.headers['ratelimit-policy'], '"location-0";q=1;w=3600');
    for (const agent of [a!, b!]) agent.destroy();
    cli.child.kill('SIGTERM');
    assert.equal(await cli.exited, 0);
  });
});
