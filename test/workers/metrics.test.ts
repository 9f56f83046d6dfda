// `/metrics` as Prometheus scrapes it: the exposition parsed by Prometheus's own Python client
// (Debian's python3-prometheus-client), its counts matching the requests sent, summed over the
// workers, with per-process series for the process metrics and no label taken from a request.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runServing } from '../helpers/cli.js';
import { request } from '../helpers/http.js';
import { freePort } from '../helpers/server.js';

const PYTHON = '/usr/bin/python3';
const parserMissing =
  spawnSync(PYTHON, ['-c', 'import prometheus_client.parser']).status !== 0 &&
  'needs python3-prometheus-client (.ci/run installs it)';
if (parserMissing && process.env.CI) throw new Error(`CI must have it: ${parserMissing}`);

const dir = mkdtempSync(join(tmpdir(), 'portico-metrics-'));
writeFileSync(join(dir, 'index.html'), 'hello');
after(() => rmSync(dir, { recursive: true, force: true }));

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Every sample of the exposition, as prometheus_client's parser reads it; throws if it cannot. */
function parse(text: string): Sample[] {
  const script = `
import json, sys
from prometheus_client.parser import text_string_to_metric_families
out = []
for family in text_string_to_metric_families(sys.stdin.read()):
    for s in family.samples:
        out.append({"name": s.name, "labels": s.labels, "value": s.value})
print(json.dumps(out))
`;
  const run = spawnSync(PYTHON, ['-c', script], { input: text, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout) as Sample[];
}

const value = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);

async function start(workers: number, metrics = true, extra = '') {
  const [port, adminPort] = [await freePort(), await freePort()];
  const file = join(dir, `portico-${port}.yaml`);
  writeFileSync(
    file,
    `global:\n  port: "127.0.0.1:${port}"\n  wwwroot: ${dir}\n  workers: ${workers}\n  admin:\n    listen: ${adminPort}\n    status: true\n    metrics: ${metrics}\n${extra}`,
  );
  const cli = await runServing(file);
  return { port, adminPort, cli };
}

describe('/metrics', { skip: parserMissing }, () => {
  for (const workers of [2, 1]) {
    it(`counts what was sent, with workers: ${workers}`, async () => {
      const { port, adminPort, cli } = await start(workers);
      let bodyBytes = 0;
      for (let i = 0; i < 30; i++) {
        const r = await request(port, '/');
        assert.equal(r.status, 200);
        bodyBytes += r.body.length;
      }
      for (let i = 0; i < 5; i++) {
        const r = await request(port, `/missing-${i}-secret`);
        assert.equal(r.status, 404);
        bodyBytes += r.body.length;
      }
      for (let i = 0; i < 3; i++) await request(port, '/', { method: 'HEAD' });
      assert.equal((await request(adminPort, '/reload', { method: 'POST' })).status, 200);

      const reply = await request(adminPort, '/metrics');
      assert.equal(reply.status, 200);
      assert.equal(reply.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
      const samples = parse(reply.text);
      const requests = 'portico_http_requests_total';
      assert.equal(value(samples, requests, { method: 'GET', status: '2xx', host: '*' }), 30);
      assert.equal(value(samples, requests, { method: 'GET', status: '4xx' }), 5);
      assert.equal(value(samples, requests, { method: 'HEAD', status: '2xx' }), 3);
      assert.equal(value(samples, 'portico_http_request_duration_seconds_count'), 38);
      assert.equal(value(samples, 'portico_http_response_body_bytes_total'), bodyBytes);
      assert.equal(value(samples, 'portico_reloads_total', { outcome: 'applied' }), 1);
      assert.ok(samples.some((s) => s.name === 'portico_connections_active'));
      // Every response's head and body went out on the wire; the 38 requests came in on it.
      assert.ok(value(samples, 'portico_connection_sent_bytes_total') > bodyBytes + 38 * 17);
      assert.ok(value(samples, 'portico_connection_received_bytes_total') > 38 * 16);
      // One resident-memory series per process: the primary and each worker, or the one server.
      const processes = samples
        .filter((s) => s.name === 'process_resident_memory_bytes')
        .map((s) => s.labels.process)
        .sort();
      assert.deepEqual(processes, workers === 2 ? ['primary', 'worker 1', 'worker 2'] : ['server']);
      for (const s of samples)
        for (const v of Object.values(s.labels))
          assert.doesNotMatch(v, /missing|secret/, `${s.name} has a label from a request path`);
      const status = JSON.parse((await request(adminPort, '/status')).text) as {
        requests_total: number;
      };
      assert.equal(status.requests_total, 38);
      cli.child.kill('SIGTERM');
      assert.equal(await cli.exited, 0);
    });
  }

  it('counts the cache and the proxy backend across workers: 2', async (t) => {
    let asked = 0;
    const origin = createServer((req, res) => {
      asked++;
      const cacheControl = req.url === '/kept' ? 'max-age=60' : 'no-store';
      res.writeHead(200, { 'Cache-Control': cacheControl }).end('from the origin');
    });
    origin.listen(0, '127.0.0.1');
    await once(origin, 'listening');
    t.after(() => origin.close());
    const backend = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
    const { port, adminPort, cli } = await start(
      2,
      true,
      `  loadModules: [cache, rproxy]\n  proxyTo: ${backend}\n`,
    );
    for (let i = 0; i < 10; i++) assert.equal((await request(port, '/kept')).status, 200);
    for (let i = 0; i < 4; i++) assert.equal((await request(port, '/passed')).status, 200);
    const samples = parse((await request(adminPort, '/metrics')).text);
    const hits = value(samples, 'portico_cache_hits_total');
    const misses = value(samples, 'portico_cache_misses_total');
    assert.equal(hits + misses, 14);
    // The other worker may look before the first store is committed: at most one more miss.
    assert.ok(misses === 5 || misses === 6, `misses: ${misses}`);
    assert.equal(value(samples, 'portico_cache_stores_total'), misses - 4);
    // Held once for the server, not once per worker.
    assert.equal(value(samples, 'portico_cache_entries'), 1);
    assert.ok(value(samples, 'portico_cache_bytes') > 0);
    assert.equal(value(samples, 'portico_upstream_requests_total', { backend }), asked);
    assert.equal(asked, misses);
    assert.equal(value(samples, 'portico_upstream_errors_total', { backend }), 0);
    assert.equal(value(samples, 'portico_upstream_healthy', { backend }), 1);
    cli.child.kill('SIGTERM');
    assert.equal(await cli.exited, 0);
  });

  it('counts the Python processes once for the server, with workers: 2', async () => {
    const app = join(dir, 'app.py');
    writeFileSync(
      app,
      'def application(environ, start_response):\n    start_response("200 OK", [])\n    return [b"ok"]\n',
    );
    const { port, adminPort, cli } = await start(
      2,
      true,
      `  loadModules: [wsgi, wsgid]\n  pythonExecutable: ${PYTHON}\n  wsgiApplicationPath: ${app}\n  wsgiPath: /one\n  wsgidApplicationPath: ${app}\n  wsgidPath: /many\n`,
    );
    assert.equal((await request(port, '/one/')).text, 'ok');
    assert.equal((await request(port, '/many/')).text, 'ok');
    const samples = parse((await request(adminPort, '/metrics')).text);
    // wsgi: the primary's one process, not one per worker; wsgid: one per CPU in all.
    assert.equal(value(samples, 'portico_gateway_processes', { module: 'wsgi' }), 1);
    assert.equal(
      value(samples, 'portico_gateway_processes', { module: 'wsgid' }),
      2 * Math.max(1, Math.round(availableParallelism() / 2)),
    );
    assert.equal(value(samples, 'portico_gateway_restarts_total', { module: 'wsgi' }), 0);
    cli.child.kill('SIGTERM');
    assert.equal(await cli.exited, 0);
  });

  it('is off unless the admin block turns it on', async () => {
    const { adminPort, cli } = await start(2, false);
    const reply = await request(adminPort, '/metrics');
    assert.equal(reply.status, 404);
    assert.deepEqual(JSON.parse(reply.text), { error: 'endpoint disabled' });
    cli.child.kill('SIGTERM');
    assert.equal(await cli.exited, 0);
  });
});
