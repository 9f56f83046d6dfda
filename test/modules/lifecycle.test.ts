// The module contract's lifecycle through a real server (ARCHITECTURE.md, "Modules"): check at
// load with positions, one provisioned stage per distinct options, leases kept across a reload
// that keeps the options and returned after in-flight requests when it drops them, and nothing
// left open after stop.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { formatDiagnostic } from '../../src/config/diagnostics.js';
import { loadConfig, loadConfigText } from '../../src/config/load.js';
import { propertyTable, type PropertyTable } from '../../src/config/property-table.js';
import { PROPERTY_TABLE } from '../../src/modules/registry.js';
import { configChecks } from '../../src/server/config-checks.js';
import { request } from '../helpers/http.js';
import { startServer } from '../helpers/server.js';
import { probe, probeModule, ProbeResource } from './probe-module.js';

// The test server's module list: the probe alone, its rows its table's only module rows.
const modules = [probeModule];

/** Fifty locations sharing one target, and one with a target of its own. */
function config(shared: string, own = 'tcp://127.0.0.1:4002/'): string {
  const locations = Array.from(
    { length: 50 },
    (_, i) => `      - path: /l${i}\n        probePath: /l${i}\n`,
  ).join('');
  return `global:\n  loadModules: [probe]\n  probeTo: ${shared}\nhosts:\n  - domain: localhost\n    locations:\n${locations}      - path: /own\n        probePath: /own\n        probeTo: ${own}\n`;
}

function tcpServers(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'TCPServerWrap').length;
}

describe('the module lifecycle', () => {
  it('reports check errors with their positions', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'portico-modules-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'portico.yaml');
    writeFileSync(file, config('tcp://127.0.0.1:0/', 'tcp://127.0.0.1:0'));
    const result = await loadConfig(file, {
      cwd: dir,
      properties: propertyTable(modules),
      checks: configChecks(modules),
    });
    assert.equal(result.config, undefined);
    assert.deepEqual(result.diagnostics.map(formatDiagnostic), [
      'portico.yaml:3:12: global.probeTo: port 0 is not a target',
      'portico.yaml:109:18: hosts[0].locations[50].probeTo: port 0 is not a target',
    ]);
  });

  it('knows its properties only where it is registered', () => {
    const text = 'global:\n  loadModules: [probe]\n  probeTo: tcp://127.0.0.1:4001/\n';
    const read = (properties: PropertyTable) =>
      loadConfigText(text, 'yaml', 'portico.yaml', { properties }).diagnostics.map(
        formatDiagnostic,
      );
    assert.deepEqual(read(propertyTable(modules)), []);
    assert.deepEqual(read(PROPERTY_TABLE), [
      'portico.yaml:2:17: global.loadModules[0]: unknown module "probe" (modules: cache, fauth, rproxy, cgi, scgi, fcgi, wsgi, wsgid, asgi)',
      'portico.yaml:3:3: warning: global.probeTo: unknown property, ignored; did you mean "proxyTo"?',
    ]);
  });

  it(
    'shares a stage among equal options, keeps resources across reloads, releases them after in-flight requests, and at stop',
    {
      timeout: 30_000,
    },
    async () => {
      const handlesBefore = tcpServers();
      const opened = ProbeResource.opened;
      const provisioned = probe.provisioned;
      const s = await startServer(config('tcp://127.0.0.1:4001/'), { modules });
      const get = async (path: string) =>
        (await request(s.port, path, { headers: { host: 'localhost' } })).text;
      try {
        // Fifty locations, one provisioned stage; the odd one out has its own.
        assert.equal(probe.provisioned - provisioned, 2);
        assert.equal(ProbeResource.opened - opened, 2);
        const first = await get('/l0/x');
        assert.match(first, /^stage \d+ resource \d+ tcp:\/\/127\.0\.0\.1:4001\/$/);
        assert.equal(await get('/l49/y'), first);
        assert.notEqual(await get('/own/z'), first);
        const status = JSON.parse(JSON.stringify(s.server.status())) as {
          modules: { probe: { target: string }[] };
        };
        assert.deepEqual(status.modules.probe.map((m) => m.target).sort(), [
          'tcp://127.0.0.1:4001/',
          'tcp://127.0.0.1:4002/',
        ]);

        // Same options: a new stage, the same resource.
        s.rewrite(config('tcp://127.0.0.1:4001/'));
        assert.deepEqual(await s.server.reloadFromSource(), { ok: true, reloads: 1 });
        const again = await get('/l7/x');
        assert.notEqual(again, first, 'a new Plan provisions its own stage');
        assert.equal(
          again.split(' ').slice(2).join(' '),
          first.split(' ').slice(2).join(' '),
          'and keeps the resource',
        );
        assert.equal(ProbeResource.opened - opened, 2);

        // Options dropped while a request is in flight: the resource stays until it ends.
        probe.hold();
        const slow = get('/l3/slow');
        await probe.arrived;
        s.rewrite(config('tcp://127.0.0.1:4003/'));
        assert.deepEqual(await s.server.reloadFromSource(), { ok: true, reloads: 2 });
        assert.match(await get('/l3/x'), /tcp:\/\/127\.0\.0\.1:4003\/$/);
        const targets = () => [...ProbeResource.live].map((r) => r.target).sort();
        assert.deepEqual(targets(), [
          'tcp://127.0.0.1:4001/',
          'tcp://127.0.0.1:4002/',
          'tcp://127.0.0.1:4003/',
        ]);
        probe.release();
        assert.match(
          await slow,
          /tcp:\/\/127\.0\.0\.1:4001\/$/,
          'the request in flight finished on its own Plan',
        );
        for (let i = 0; i < 50 && targets().includes('tcp://127.0.0.1:4001/'); i++)
          await new Promise((resolve) => setTimeout(resolve, 10));
        assert.deepEqual(targets(), ['tcp://127.0.0.1:4002/', 'tcp://127.0.0.1:4003/']);
      } finally {
        probe.release();
        await s.close();
      }
      assert.equal(ProbeResource.live.size, 0, 'stop releases every resource');
      // A closed handle leaves Node's list on a later turn of the event loop.
      for (let i = 0; i < 100 && tcpServers() > handlesBefore; i++)
        await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal(tcpServers(), handlesBefore, 'no listening handle is left open');
    },
  );
});
