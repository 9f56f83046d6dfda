// Reaching each worker of a `workers: 2` server on purpose: a kept-alive connection stays with the
// worker that accepted it, and /status says which worker answered.
import assert from 'node:assert/strict';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { request as plainRequest } from './http.js';
import { until } from './wait.js';

/** A response through `agent`'s one kept-alive connection. */
export function via(
  agent: Agent,
  port: number,
  path = '/',
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, agent, headers, method }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
    })
      .on('error', reject)
      .end();
  });
}

/** What each worker has answered, by pid (/status of the admin API on `adminPort`). */
async function answeredByWorker(adminPort: number): Promise<Map<number, number>> {
  const status = JSON.parse((await plainRequest(adminPort, '/status')).text) as {
    workers: { pid: number; requests_total: number }[];
  };
  return new Map(status.workers.map((w) => [w.pid, w.requests_total]));
}

/**
 * One kept-alive connection to each of the two workers: new ones are opened until each worker has
 * one. `path` and `headers` make the probe a 200.
 */
export async function connectionPerWorker(
  port: number,
  adminPort: number,
  { path = '/', headers = {} }: { path?: string; headers?: Record<string, string> } = {},
): Promise<Agent[]> {
  const found = new Map<number, Agent>();
  await until(
    async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      const before = await answeredByWorker(adminPort);
      assert.equal((await via(agent, port, path, headers)).status, 200);
      const after = await answeredByWorker(adminPort);
      const worker = [...after].find(([pid, n]) => n > (before.get(pid) ?? 0))![0];
      if (found.has(worker)) agent.destroy();
      else found.set(worker, agent);
      return found.size === 2;
    },
    { what: 'a kept-alive connection to each worker' },
  );
  return [...found.values()];
}
