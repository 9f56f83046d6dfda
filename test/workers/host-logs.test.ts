// Per-host logs with `workers: 2`, configured in KDL: each worker appends whole lines to the
// hosts' files, so a file both write into holds every request's line, none torn or interleaved;
// SIGUSR1 reopens the hosts' files in every worker.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { runServing } from '../helpers/cli.js';
import { freePort } from '../helpers/server.js';
import { logged, until } from '../helpers/wait.js';
import { connectionPerWorker, via } from '../helpers/worker-connections.js';

const dir = mkdtempSync(join(tmpdir(), 'portico-worker-logs-'));
mkdirSync(join(dir, 'www'));
writeFileSync(join(dir, 'www', 'small.txt'), 'hello');
after(() => rmSync(dir, { recursive: true, force: true }));

const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean);

it('two workers append whole lines to the per-host files; SIGUSR1 reopens them in both', async () => {
  const [port, adminPort] = [await freePort(), await freePort()];
  const logs = { a: join(dir, 'a.json'), b: join(dir, 'b.log') };
  const file = join(dir, 'portico.kdl');
  writeFileSync(
    file,
    `global {
    port "127.0.0.1:${port}"
    wwwroot "www"
    workers 2
    admin {
        listen "127.0.0.1:${adminPort}"
        status true
    }
}
host domain="a.test" {
    logFilePath "${logs.a}"
    logFormat "json"
}
host domain="b.test" {
    logFilePath "${logs.b}"
    logFormat "{host} {path} {status} \\"{user_agent}\\""
}
`,
  );
  const cli = await runServing(file);
  try {
    const agents = await connectionPerWorker(port, adminPort, { path: '/small.txt' });
    // Long lines, many at once from both workers: batches large enough to meet in the file.
    const padding = 'x'.repeat(2000);
    const perWorker = 200;
    await Promise.all(
      agents.map(async (agent, worker) => {
        for (let i = 0; i < perWorker; i++)
          for (const host of ['a.test', 'b.test']) {
            const reply = await via(agent, port, `/small.txt?w=${worker}&i=${i}`, {
              host,
              'user-agent': `worker ${worker} ${padding}`,
            });
            assert.equal(reply.status, 200);
          }
      }),
    );
    const total = 2 * perWorker;
    for (const log of Object.values(logs))
      await until(() => lines(log).length, {
        ok: (n) => n === total,
        what: `${total} lines in ${log}`,
      });

    const json = lines(logs.a).map(
      (line) => JSON.parse(line) as { path: string; user_agent: string },
    );
    const template = lines(logs.b).map((line) => {
      const match = /^b\.test (\/small\.txt\?w=(\d)&i=(\d+)) 200 "worker (\d) (x+)"$/.exec(line);
      assert.ok(match, `a whole line: ${line.slice(0, 200)}`);
      assert.equal(match[2], match[4]);
      assert.equal(match[5]!.length, padding.length);
      return match[1]!;
    });
    for (const paths of [json.map((entry) => entry.path), template]) {
      const expected = [0, 1].flatMap((w) =>
        Array.from({ length: perWorker }, (_, i) => `/small.txt?w=${w}&i=${i}`),
      );
      assert.deepEqual([...paths].sort(), expected.sort(), 'every request once, from both workers');
    }
    assert.ok(json.every((entry) => entry.user_agent.endsWith(padding)));

    renameSync(logs.a, `${logs.a}.1`);
    cli.child.kill('SIGUSR1');
    await logged(cli.output, /logs reopened/);
    for (const [worker, agent] of agents.entries())
      await via(agent, port, `/small.txt?rotated=${worker}`, { host: 'a.test' });
    await until(() => lines(logs.a).length, { ok: (n) => n === 2, what: 'the reopened file' });
    assert.deepEqual(
      lines(logs.a)
        .map((line) => (JSON.parse(line) as { path: string }).path)
        .sort(),
      ['/small.txt?rotated=0', '/small.txt?rotated=1'],
    );
    assert.equal(lines(`${logs.a}.1`).length, total);
    for (const agent of agents) agent.destroy();
  } finally {
    cli.child.kill('SIGTERM');
    assert.equal(await cli.exited, 0);
  }
});
