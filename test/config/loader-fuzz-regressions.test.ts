// Configuration texts the loader fuzzing (test/fuzz/config-loader.test.ts) found answered wrongly,
// each kept as a fixed example.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { toKdl, toYaml } from '../../src/config/convert.js';
import { formatDiagnostic } from '../../src/config/diagnostics.js';
import { loadConfig, loadConfigText, type Syntax } from '../../src/config/load.js';
import { PROPERTY_TABLE } from '../../src/modules/registry.js';

const dir = mkdtempSync(join(tmpdir(), 'portico-loader-regressions-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function messages(text: string, syntax: Syntax = 'yaml'): string[] {
  return loadConfigText(text, syntax, `t.${syntax}`, {
    properties: PROPERTY_TABLE,
    env: {},
  }).diagnostics.map(formatDiagnostic);
}

describe('a YAML text that is not a mapping', () => {
  it('is refused by loadConfigText with an error, as by loadConfig (it gave neither a configuration nor a diagnostic)', async () => {
    for (const [text, got] of [
      ['g', '"g"'],
      ['42', '42'],
      ['- a\n- b\n', 'a list'],
    ] as const) {
      const fromText = loadConfigText(text, 'yaml', 't.yaml', {
        properties: PROPERTY_TABLE,
        env: {},
      });
      assert.equal(fromText.config, undefined);
      assert.deepEqual(fromText.diagnostics.map(formatDiagnostic), [
        `t.yaml:1:1: expected a mapping with "global", "hosts" and "include", got ${got}`,
      ]);
      writeFileSync(join(dir, 't.yaml'), text);
      const fromFile = await loadConfig('t.yaml', {
        properties: PROPERTY_TABLE,
        cwd: dir,
        env: {},
      });
      assert.equal(fromFile.config, undefined);
      assert.deepEqual(fromFile.diagnostics.map(formatDiagnostic), [
        't.yaml:1:1: expected a mapping with "global", "hosts" and "include"',
      ]);
    }
  });

  it('is an empty configuration when it is a lone "---", from a file as from text (a file was refused)', async () => {
    for (const text of ['---\n', '--- # nothing yet\n', '---\n...\n']) {
      writeFileSync(join(dir, 'lone.yaml'), text);
      const fromFile = await loadConfig('lone.yaml', {
        properties: PROPERTY_TABLE,
        cwd: dir,
        env: {},
      });
      assert.deepEqual(fromFile.diagnostics, []);
      const empty = { global: {}, hosts: [], properties: PROPERTY_TABLE };
      assert.deepEqual(fromFile.config, empty);
      assert.deepEqual(
        loadConfigText(text, 'yaml', 'lone.yaml', { properties: PROPERTY_TABLE, env: {} }).config,
        empty,
      );
    }
  });
});

describe('names that every JavaScript object has', () => {
  it('are unknown fields, not a crash (valueOf in admin threw a TypeError)', () => {
    assert.deepEqual(messages('global:\n  admin:\n    valueOf: 1\n'), [
      't.yaml:3:5: global.admin.valueOf: unknown field of admin block',
    ]);
    assert.deepEqual(messages('global:\n  http2Settings:\n    constructor: 1\n'), [
      't.yaml:3:5: global.http2Settings.constructor: unknown field of HTTP/2 settings',
    ]);
    assert.deepEqual(messages('global {\n  admin {\n    valueOf #null\n  }\n}\n', 'kdl'), [
      't.kdl:3:5: global.admin.valueOf: unknown field of admin block',
    ]);
    assert.deepEqual(messages('global {\n  users name="a" pass="b" hasOwnProperty=1\n}\n', 'kdl'), [
      't.kdl:2:27: global.users[0].hasOwnProperty: unknown field of user',
    ]);
  });

  it('are unknown properties, not aliases of "[object Object]" or of a function', () => {
    assert.deepEqual(messages('global:\n  toString: 1\n  __proto__: 2\n'), [
      't.yaml:2:3: warning: global.toString: unknown property, ignored',
      't.yaml:3:3: warning: global.__proto__: unknown property, ignored',
    ]);
    assert.deepEqual(messages('global {\n  constructor 1\n}\n', 'kdl'), [
      't.kdl:2:3: warning: global.constructor: unknown property, ignored',
    ]);
  });

  it('are header and variable names like any other (constructor was refused, __proto__ dropped)', () => {
    const text =
      'global:\n  customHeaders:\n    constructor: a\n    __proto__: b\n  environmentVariables:\n    __proto__: c\n';
    const { config, diagnostics, raw } = loadConfigText(text, 'yaml', 't.yaml', {
      properties: PROPERTY_TABLE,
      env: {},
    });
    assert.deepEqual(diagnostics, []);
    assert.deepEqual(Object.entries(config!.global.customHeaders!), [
      ['constructor', 'a'],
      ['__proto__', 'b'],
    ]);
    assert.deepEqual(Object.entries(config!.global.environmentVariables!), [['__proto__', 'c']]);
    for (const [converted, syntax] of [
      [toKdl(raw!, PROPERTY_TABLE), 'kdl'],
      [toYaml(raw!, PROPERTY_TABLE), 'yaml'],
    ] as const) {
      const back = loadConfigText(converted, syntax, `back.${syntax}`, {
        properties: PROPERTY_TABLE,
        env: {},
      }).config;
      assert.deepEqual(back, config, converted);
    }
  });
});
