// The cache's load-time check, through the loader every command and reload uses.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { formatDiagnostic } from '../../src/config/diagnostics.js';
import { loadConfigText } from '../../src/config/load.js';
import { PROPERTY_TABLE } from '../../src/modules/registry.js';
import { configChecks } from '../../src/server/config-checks.js';

const load = (modules: string) =>
  loadConfigText(
    `global:\n  loadModules: [${modules}]\n  authTo: http://127.0.0.1:9000/auth\n  proxyTo: http://127.0.0.1:9001\n`,
    'yaml',
    'portico.yaml',
    { properties: PROPERTY_TABLE, checks: configChecks() },
  );

it('warns when the cache comes before fauth, whose answers it would then skip', () => {
  const before = load('cache, fauth, rproxy');
  assert.ok(before.config, 'a warning, not an error');
  assert.deepEqual(before.diagnostics.map(formatDiagnostic), [
    'portico.yaml:2:3: warning: global.loadModules: cache comes before fauth: stored responses are served without asking the authentication server; list fauth first',
  ]);
  assert.deepEqual(load('fauth, cache, rproxy').diagnostics, []);
});
