// `convert` round trip: YAML → KDL → YAML gives the same Config for every sample, including the
// reference docs' examples, and KDL → YAML → KDL is stable.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { toKdl, toYaml } from '../../src/config/convert.js';
import { formatDiagnostic } from '../../src/config/diagnostics.js';
import { loadConfigText, type Syntax } from '../../src/config/load.js';
import { configToPlain } from '../../src/config/shape.js';
import { PROPERTY_TABLE } from '../../src/modules/registry.js';
import { ROOT } from '../helpers/cli.js';

const ENV = { PORTICO_ADMIN_TOKEN: 'token' };

function load(text: string, syntax: Syntax) {
  // Samples name the test certificates relative to test/fixtures/valid.
  const result = loadConfigText(text, syntax, `sample.${syntax}`, {
    properties: PROPERTY_TABLE,
    env: ENV,
    baseDir: join(ROOT, 'test/fixtures/valid'),
  });
  assert.ok(
    result.config && result.raw?.kind === 'map',
    result.diagnostics.map(formatDiagnostic).join('\n') + `\n${text}`,
  );
  return { plain: configToPlain(result.config), raw: result.raw };
}

const samples: [string, string][] = [
  ['everything.yaml', readFileSync(join(ROOT, 'test/fixtures/valid/everything.yaml'), 'utf8')],
  ['portico.yaml', readFileSync(join(ROOT, 'portico.yaml'), 'utf8')],
  ...PROPERTY_TABLE.names.flatMap((name): [string, string][] => {
    const example = PROPERTY_TABLE.row(name)!.example;
    return example ? [[`example of ${name}`, example]] : [];
  }),
  [
    'a bare admin block and sections without a value',
    'global:\n  admin:\nhosts:\n  - domain: example.com\n    locations:\n    errorConfig:\n',
  ],
  [
    'bare admin endpoint directives',
    'global:\n  admin:\n    health:\n    status:\n    config: false\n    runtime:\n',
  ],
  [
    'quoting and odd values',
    'global:\n  customHeaders:\n    X-Note: "quote \\" backslash \\\\ tab\\t"\n    "true": "null"\n  environmentVariables:\n    MULTILINE: "line one\\nline two\\r\\n\\u0001"\n    EMPTY: ""\n    NUMERIC: "0123"\n  timeout: null\n  loadModules: [cache, rproxy]\n  maximumCacheEntries: null\n  port: "127.0.0.1:8080"\nhosts:\n  - ip: "::1"\n    proxyTo: http://127.0.0.1:1\n    errorConfig:\n      - wwwroot: /e\n',
  ],
];

describe('convert round trip', () => {
  for (const [name, yaml] of samples) {
    it(name, () => {
      const fromYaml = load(yaml, 'yaml');
      const kdl = toKdl(fromYaml.raw, PROPERTY_TABLE);
      const fromKdl = load(kdl, 'kdl');
      assert.deepEqual(fromKdl.plain, fromYaml.plain, kdl);
      const yamlAgain = toYaml(fromKdl.raw, PROPERTY_TABLE);
      assert.deepEqual(load(yamlAgain, 'yaml').plain, fromYaml.plain, yamlAgain);
      assert.equal(
        toKdl(load(yamlAgain, 'yaml').raw, PROPERTY_TABLE),
        kdl,
        'KDL → YAML → KDL is stable',
      );
    });
  }

  it('everything.kdl is the KDL twin of everything.yaml', () => {
    const yaml = load(
      readFileSync(join(ROOT, 'test/fixtures/valid/everything.yaml'), 'utf8'),
      'yaml',
    );
    const kdl = load(readFileSync(join(ROOT, 'test/fixtures/valid/everything.kdl'), 'utf8'), 'kdl');
    assert.deepEqual(kdl.plain, yaml.plain);
  });

  it('writes what a YAML key without a value stands for, as KDL has no null block', () => {
    assert.equal(
      toKdl(load('global:\n  admin:\n', 'yaml').raw, PROPERTY_TABLE),
      'global {\n    admin {\n    }\n}\n',
    );
    const { raw } = load(
      'global:\n  admin:\n    health:\n    reload_get:\nhosts:\n  - domain: example.com\n    locations:\n',
      'yaml',
    );
    assert.equal(
      toKdl(raw, PROPERTY_TABLE),
      'global {\n    admin {\n        health true\n        reload_get true\n    }\n}\n\nhost domain="example.com" {\n}\n',
    );
    assert.equal(
      toYaml(raw, PROPERTY_TABLE),
      'global:\n  admin:\n    health: true\n    reload_get: true\nhosts:\n  - domain: example.com\n',
    );
  });

  it('writes documented names for accepted aliases', () => {
    const { raw } = load(
      'global:\n  loadModules: [cache]\n  maximumCachedResponseSize: 10\n  users:\n    - user: bob\n      pass: x\n',
      'yaml',
    );
    assert.equal(
      toKdl(raw, PROPERTY_TABLE),
      'global {\n    loadModules "cache"\n    maximumCacheResponseSize 10\n    users name="bob" pass="x"\n}\n',
    );
    assert.equal(
      toYaml(raw, PROPERTY_TABLE),
      'global:\n  loadModules:\n    - cache\n  maximumCacheResponseSize: 10\n  users:\n    - name: bob\n      pass: x\n',
    );
  });
});
