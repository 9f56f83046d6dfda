// setHeaders, removeHeaders, respond, indexFiles and mimeTypes read from KDL as from YAML, and bad
// values of them refused with their positions, never a crash.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatDiagnostic } from '../../src/config/diagnostics.js';
import { loadConfigText } from '../../src/config/load.js';
import { configToPlain } from '../../src/config/shape.js';
import { PROPERTY_TABLE } from '../../src/modules/registry.js';

function load(text: string, syntax: 'kdl' | 'yaml' = 'kdl') {
  const file = `test.${syntax}`;
  const result = loadConfigText(text, syntax, file, { properties: PROPERTY_TABLE, env: {} });
  const errors = result.diagnostics.filter((d) => d.severity === 'error').map(formatDiagnostic);
  return { errors, plain: result.config && configToPlain(result.config) };
}

describe('response and static-file settings', () => {
  it('reads the KDL form into the model', () => {
    const { plain, errors } = load(`global {
    setHeaders { X-Frame-Options "DENY"; X-Where "{path}" }
    removeHeaders "X-Powered-By"
    indexFiles "default.htm"
    mimeTypes { .foo "application/x-foo" }
}
host domain="example.com" {
    location "/healthz" {
        respond { status 200; body "ok"; contentType "text/plain" }
    }
    location "/blocked" {
        respond { abort true }
    }
}
`);
    assert.deepEqual(errors, []);
    assert.deepEqual(plain, {
      global: {
        setHeaders: { 'X-Frame-Options': 'DENY', 'X-Where': '{path}' },
        removeHeaders: ['X-Powered-By'],
        indexFiles: ['default.htm'],
        mimeTypes: { '.foo': 'application/x-foo' },
      },
      hosts: [
        {
          domain: 'example.com',
          locations: [
            { path: '/healthz', respond: { status: 200, body: 'ok', contentType: 'text/plain' } },
            { path: '/blocked', respond: { abort: true } },
          ],
        },
      ],
    });
  });

  it('refuses bad header names and values, a bad status, abort with a body, with positions', () => {
    const { errors } = load(`global {
    setHeaders { "X Bad" "a"; Upgrade "h2c" }
    removeHeaders "Date" "Transfer-Encoding"
}
host domain="example.com" {
    location "/a" {
        respond { status 600; body "x" }
    }
    location "/b" {
        respond { abort true; body "gone" }
    }
}
`);
    assert.deepEqual(errors, [
      'test.kdl:2:18: global.setHeaders.X Bad: invalid header name "X Bad"',
      'test.kdl:2:31: global.setHeaders.Upgrade: "Upgrade" is not allowed here: it is connection-specific (HTTP/2 forbids it in every response; the server manages connections itself)',
      'test.kdl:3:19: global.removeHeaders[0]: "Date" cannot be removed: a server with a clock must send it (RFC 9110 §6.6.1), and the server adds it to every response',
      'test.kdl:3:26: global.removeHeaders[1]: "Transfer-Encoding" cannot be removed: it is connection-specific (HTTP/2 forbids it in every response; the server manages connections itself)',
      'test.kdl:7:26: hosts[0].locations[0].respond.status: 600 is out of range for a status code (200–599)',
      'test.kdl:10:19: hosts[0].locations[1].respond.abort: abort closes the connection without a response: it cannot go with body',
    ]);
  });

  it('refuses a body larger than 64 KiB, counted in UTF-8 bytes', () => {
    const ok = 'é'.repeat(32 * 1024);
    assert.deepEqual(load(`global:\n  respond:\n    body: "${ok}"\n`, 'yaml').errors, []);
    assert.deepEqual(load(`global:\n  respond:\n    body: "${ok}x"\n`, 'yaml').errors, [
      'test.yaml:3:5: global.respond.body: 65537 bytes is more than a fixed response may hold (65536); serve a file instead',
    ]);
  });

  it('refuses respond in an errorConfig, where it would answer for the error page', () => {
    const { errors } = load(
      `hosts:
  - domain: example.com
    errorConfig:
      - scode: 404
        respond:
          body: nope
`,
      'yaml',
    );
    assert.equal(errors.length, 1);
    assert.match(errors[0]!, /^test\.yaml:5:9: hosts\[0\]\.errorConfig\[0\]\.respond: /);
  });
});
