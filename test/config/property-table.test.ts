// The property table of a build: the core rows and those its modules bring, each module's rows
// known only where it is registered, listed where the reference lists them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CORE_TABLE, propertyTable } from '../../src/config/property-table.js';
import { row, SCOPES, type PropertyRows } from '../../src/config/properties.js';
import { str } from '../../src/config/types.js';
import { MODULES, PROPERTY_TABLE } from '../../src/modules/registry.js';

const rows = (...names: string[]): PropertyRows =>
  Object.fromEntries(
    names.map((name) => [
      name,
      row({ type: str(), scopes: SCOPES, since: 'Portico', summary: name }),
    ]),
  );

describe('the property table', () => {
  it('holds the core rows alone when the build has no module', () => {
    assert.deepEqual(CORE_TABLE.modules, []);
    assert.equal(CORE_TABLE.row('proxyTo'), undefined);
    assert.equal(CORE_TABLE.canonical('maximumCachedResponseSize'), 'maximumCachedResponseSize');
    assert.equal(
      CORE_TABLE.canonical('automaticTLSLetsEncryptProduction'),
      'automaticTLSCaProduction',
    );
    // A core row that the gateways share names its modules itself.
    assert.deepEqual(CORE_TABLE.modulesOf('proxyConnectTimeout'), [
      'rproxy',
      'fauth',
      'fcgi',
      'scgi',
    ]);
  });

  it('adds each registered module: its name, its rows, their spellings', () => {
    assert.deepEqual(
      PROPERTY_TABLE.modules,
      MODULES.map((m) => m.name),
    );
    assert.deepEqual(PROPERTY_TABLE.modulesOf('scgiTo'), ['scgi']);
    assert.equal(PROPERTY_TABLE.canonical('maximumCachedResponseSize'), 'maximumCacheResponseSize');
    // A row the Python modules share is listed once, with each module that brings it.
    assert.deepEqual(PROPERTY_TABLE.modulesOf('pythonExecutable'), ['wsgi', 'wsgid', 'asgi']);
    assert.deepEqual(PROPERTY_TABLE.modulesOf('wsgiClearModuleImportPath'), ['wsgi', 'wsgid']);
    assert.equal(PROPERTY_TABLE.row('proxyTo')?.replacesParent, true);
  });

  it('lists a module row after the property it names, wherever that comes from', () => {
    const after = (name: string) => PROPERTY_TABLE.names[PROPERTY_TABLE.names.indexOf(name) - 1];
    assert.equal(after('loadBalancerHealthCheckWindow'), 'enableHTTP3');
    assert.equal(after('cacheVaryHeaders'), 'secureProxyTo');
    assert.equal(after('proxyInterceptErrors'), 'asgiPath');
    for (const name of PROPERTY_TABLE.names) {
      const anchor = PROPERTY_TABLE.row(name)!.listedAfter;
      if (anchor !== undefined) assert.equal(after(name), anchor, name);
    }
  });

  it('puts rows whose anchor the build lacks after their module’s previous row, or at the end', () => {
    const table = propertyTable([
      {
        name: 'a',
        properties: { ...rows('a1', 'a2'), a3: { ...rows('a3').a3!, listedAfter: 'nowhere' } },
      },
      { name: 'b', properties: { b1: { ...rows('b1').b1!, listedAfter: 'port' } } },
    ]);
    const names = table.names;
    assert.deepEqual(names.slice(0, 2), ['port', 'b1']);
    assert.deepEqual(names.slice(-3), ['a1', 'a2', 'a3']);
    assert.deepEqual(table.modulesOf('a2'), ['a']);
  });

  it('refuses two modules of one name, and a module that brings a property the table has', () => {
    assert.throws(
      () =>
        propertyTable([
          { name: 'a', properties: rows('a1') },
          { name: 'a', properties: rows('a2') },
        ]),
      /two modules are named "a"/,
    );
    assert.throws(
      () => propertyTable([{ name: 'a', properties: rows('port') }]),
      /module "a" brings a property "port" the table has/,
    );
    assert.throws(
      () =>
        propertyTable([
          { name: 'a', properties: rows('x') },
          { name: 'b', properties: rows('x') },
        ]),
      /module "b" brings a property "x" the table has/,
    );
  });
});
