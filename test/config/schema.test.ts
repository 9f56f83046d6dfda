// The JSON Schema that editors use agrees with the validator on the samples.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { configSchema } from '../../src/config/schema.js';
import { ROOT } from '../helpers/cli.js';

const ajv = new Ajv({ allErrors: true, strict: false });
const check = ajv.compile(configSchema());
const yamlFile = (path: string): unknown => parse(readFileSync(join(ROOT, path), 'utf8'));

describe('JSON Schema', () => {
  it('accepts the samples', () => {
    for (const file of ['test/fixtures/valid/everything.yaml', 'portico.yaml', 'test/fixtures/warnings/warnings.yaml']) {
      assert.equal(check(yamlFile(file)), true, `${file}: ${JSON.stringify(check.errors)}`);
    }
  });

  it('refuses what the validator refuses by shape', () => {
    for (const file of ['port-range', 'bool-type', 'list-type', 'unknown-property', 'unknown-top-level', 'scope-port-in-host', 'status-code-range', 'tls-version-unknown', 'unknown-module', 'location-without-path', 'rewrite-without-replacement']) {
      assert.equal(check(yamlFile(`test/fixtures/invalid/${file}.yaml`)), false, file);
    }
  });
});
