// The property table against the specification: defaults as its tables give them, every property
// exercised by the everything sample, examples where the shape needs one.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadConfigText } from '../../src/config/load.js';
import type { ObjectSpec } from '../../src/config/types.js';
import { PROPERTY_TABLE } from '../../src/modules/registry.js';
import { ROOT } from '../helpers/cli.js';

const propertyRow = (name: string) => PROPERTY_TABLE.row(name);
const PROPERTY_NAMES = PROPERTY_TABLE.names;

describe('property table', () => {
  it('has the defaults of SPEC-legacy-yaml.md and CONTRACT.md', () => {
    const expected: Record<string, unknown> = {
      port: 80,
      sport: 443,
      secure: false,
      enableHTTP2: true,
      useClientCertificate: false,
      tlsMinVersion: 'TLSv1.2',
      tlsMaxVersion: 'TLSv1.3',
      disableNonEncryptedServer: false,
      enableOCSPStapling: true,
      enableAutomaticTLS: false,
      automaticTLSCaProduction: true,
      useAutomaticTLSHTTPChallenge: false,
      enableHTTP3: false,
      loadBalancerHealthCheckWindow: 5000,
      timeout: 300000,
      maximumCacheEntries: 1024,
      wsgiClearModuleImportPath: false,
      asgiClearModuleImportPath: false,
      disableToHTTPSRedirect: false,
      wwwredirect: false,
      enableIPSpoofing: false,
      allowDoubleSlashes: false,
      enableRewriteLogging: false,
      disableTrailingSlashRedirects: false,
      enableETag: true,
      enableCompression: true,
      enableDirectoryListing: false,
      maximumCacheResponseSize: 2097152,
      scgiTo: 'tcp://localhost:4000/',
      fcgiTo: 'tcp://localhost:4000/',
      enableLoadBalancerHealthCheck: false,
      loadBalancerHealthCheckMaximumFails: 3,
      disableProxyCertificateVerification: false,
      wsgiPath: '/',
      wsgidPath: '/',
      asgiPath: '/',
      proxyInterceptErrors: false,
      disableProxyXForwarded: false,
      shutdownTimeout: 30000,
      workers: 'auto',
      pythonExecutable: 'python3',
      domain: undefined,
      proxyTo: undefined,
      cert: undefined,
      admin: undefined,
    };
    for (const [name, value] of Object.entries(expected))
      assert.deepEqual(propertyRow(name)?.default, value, name);
    const admin = propertyRow('admin')!.type as ObjectSpec;
    const adminDefaults = Object.fromEntries(
      Object.entries(admin.fields).map(([k, f]) => [k, f.default]),
    );
    assert.deepEqual(adminDefaults, {
      listen: '127.0.0.1:8081',
      health: true,
      status: false,
      config: false,
      reload: true,
      reload_get: true,
      runtime: true,
      // Off in every profile unless set (CONTRACT.md).
      metrics: false,
      auth_token: undefined,
    });
  });

  it('marks the secrets of CONTRACT.md sensitive', () => {
    assert.equal(propertyRow('key')?.sensitive, true);
    assert.equal((propertyRow('admin')!.type as ObjectSpec).fields.auth_token?.sensitive, true);
    const sensitive = PROPERTY_NAMES.filter((n) => propertyRow(n)?.sensitive);
    assert.deepEqual(sensitive, ['key']);
  });

  it('records versions from the specification', () => {
    for (const name of [
      'useAutomaticTLSHTTPChallenge',
      'enableHTTP3',
      'wsgiPath',
      'asgiApplicationPath',
    ])
      assert.equal(propertyRow(name)?.since, '1.1.0');
    for (const name of ['errorConfig', 'scode', 'proxyInterceptErrors'])
      assert.equal(propertyRow(name)?.since, '1.3.0');
    assert.equal(propertyRow('disableProxyXForwarded')?.since, '1.3.6');
    for (const name of [
      'shutdownTimeout',
      'clientCertificateCA',
      'automaticTLSDirectoryUrl',
      'pythonExecutable',
    ])
      assert.equal(propertyRow(name)?.since, 'Portico');
  });

  it('aliases point at real properties', () => {
    for (const target of Object.values(PROPERTY_TABLE.aliases)) assert.ok(propertyRow(target));
  });

  it('every property appears in test/fixtures/valid/everything.yaml', () => {
    const result = loadConfigText(
      readFileSync(join(ROOT, 'test/fixtures/valid/everything.yaml'), 'utf8'),
      'yaml',
      'everything.yaml',
      { properties: PROPERTY_TABLE, env: {}, baseDir: join(ROOT, 'test/fixtures/valid') },
    );
    assert.ok(result.config);
    const used = new Set<string>(Object.keys(result.config.global));
    for (const h of result.config.hosts) {
      for (const k of Object.keys(h.settings)) used.add(k);
      if (h.locations.length) used.add('locations').add('path');
      if (h.errorConfigs.length) used.add('errorConfig');
      if (h.errorConfigs.some((e) => e.scode !== undefined)) used.add('scode');
      for (const l of [...h.locations, ...h.errorConfigs])
        for (const k of Object.keys(l.settings)) used.add(k);
    }
    assert.deepEqual(
      PROPERTY_NAMES.filter((n) => !used.has(n)),
      [],
    );
  });

  it('has an example for every property whose shape needs one', () => {
    for (const name of PROPERTY_NAMES) {
      const row = propertyRow(name)!;
      const kind = row.type.kind === 'nullable' ? row.type.of.kind : row.type.kind;
      const needs =
        kind === 'object' ||
        kind === 'map' ||
        kind === 'section' ||
        (row.type.kind === 'list' && row.type.of.kind === 'object');
      if (needs) assert.ok(row.example, `${name} needs an example`);
    }
  });
});
