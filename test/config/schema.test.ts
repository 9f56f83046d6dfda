// The JSON Schema that editors use agrees with the validator on the samples.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { configSchema } from '../../src/config/schema.js';
import { PROPERTY_TABLE } from '../../src/modules/registry.js';
import { ROOT } from '../helpers/cli.js';

const ajv = new Ajv({ allErrors: true, strict: false });
const check = ajv.compile(configSchema(PROPERTY_TABLE));
const yamlFile = (path: string): unknown => parse(readFileSync(join(ROOT, path), 'utf8'));
const validYaml = readdirSync(join(ROOT, 'test/fixtures/valid'))
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => `test/fixtures/valid/${f}`);

describe('JSON Schema', () => {
  it('accepts the samples', () => {
    for (const file of [...validYaml, 'portico.yaml', 'test/fixtures/warnings/warnings.yaml']) {
      assert.equal(check(yamlFile(file)), true, `${file}: ${JSON.stringify(check.errors)}`);
    }
  });

  it('refuses what the validator refuses by shape', () => {
    for (const file of [
      'port-range',
      'bool-type',
      'list-type',
      'scope-port-in-host',
      'status-code-range',
      'tls-version-unknown',
      'unknown-module',
      'location-without-path',
      'rewrite-without-replacement',
      'check-nonstandard-1xx',
      'env-value-nul',
    ]) {
      assert.equal(check(yamlFile(`test/fixtures/invalid/${file}.yaml`)), false, file);
    }
    // Unknown names only warn in validate (Ferron starts with them); an editor still marks them.
    assert.equal(check(yamlFile('test/fixtures/warnings/unknown.yaml')), false);
  });

  it('accepts the admin block and its endpoint directives without a value, as the validator does', () => {
    assert.equal(check(parse('global:\n  admin:\n')), true, JSON.stringify(check.errors));
    const directives = ['health', 'status', 'config', 'reload', 'reload_get', 'runtime'];
    assert.equal(
      check(parse(`global:\n  admin:\n${directives.map((d) => `    ${d}:\n`).join('')}`)),
      true,
      JSON.stringify(check.errors),
    );
    assert.equal(check(parse('global:\n  admin:\n    listen:\n')), false);
    assert.equal(check(parse('global:\n  secure:\n')), false);
  });

  it('refuses the custom headers the validator refuses, in any case', () => {
    const refused = [
      'Connection',
      'keep-alive',
      'PROXY-CONNECTION',
      'te',
      'Transfer-Encoding',
      'upgrade',
      'Http2-Settings',
      'content-LENGTH',
    ];
    for (const name of refused)
      assert.equal(check({ global: { customHeaders: { [name]: 'x' } } }), false, name);
    for (const name of ['X-Connection', 'Connections', 'Tea', 'Content-Type', 'Link']) {
      assert.equal(
        check({ global: { customHeaders: { [name]: 'x' } } }),
        true,
        `${name}: ${JSON.stringify(check.errors)}`,
      );
    }
  });
});
