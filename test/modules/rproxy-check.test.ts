// rproxy's load-time check, through the loader every command and reload uses.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { formatDiagnostic } from '../../src/config/diagnostics.js';
import { loadConfigText } from '../../src/config/load.js';
import { PROPERTY_TABLE } from '../../src/modules/registry.js';
import { configChecks } from '../../src/server/config-checks.js';

it('warns, at the URL and without showing it, that user information in a backend URL is not sent', () => {
  const text =
    'global:\n  loadModules: [rproxy]\n  proxyTo: http://alice:s3cret@127.0.0.1:3000\nhosts:\n  - domain: a.test\n    secureProxyTo:\n      - http://127.0.0.1:3001\n      - http://bob@127.0.0.1:3002\n';
  const result = loadConfigText(text, 'yaml', 'portico.yaml', {
    properties: PROPERTY_TABLE,
    checks: configChecks(),
  });
  assert.ok(result.config, 'a warning, not an error');
  const lines = result.diagnostics.map(formatDiagnostic);
  assert.deepEqual(lines, [
    'portico.yaml:3:12: warning: global.proxyTo: user information in a backend URL is not sent to the backend; the backend sees no credentials',
    'portico.yaml:8:9: warning: hosts[0].secureProxyTo[1]: user information in a backend URL is not sent to the backend; the backend sees no credentials',
  ]);
  assert.doesNotMatch(lines.join('\n'), /s3cret/);
});
