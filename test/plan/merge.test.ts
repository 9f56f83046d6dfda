// CONTRACT.md's merge rules, point 3.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { PROPERTY_TABLE } from '../../src/modules/registry.js';
import { mergeSettings } from '../../src/plan/merge.js';

it('scalars replace, proxyTo replaces, other lists concatenate parent first, mappings merge key by key', () => {
  const parent = {
    wwwroot: '/a',
    proxyTo: ['http://a'],
    blocklist: ['192.0.2.1'],
    rewriteMap: [{ regex: '^/a', replacement: '/b' }],
    customHeaders: { 'X-A': '1', 'X-B': '2' },
    timeout: 1000,
  };
  const child = {
    wwwroot: '/b',
    proxyTo: ['http://b'],
    rewriteMap: [{ regex: '^/c', replacement: '/d' }],
    customHeaders: { 'X-B': 'child', 'X-C': '3' },
    timeout: null,
  };
  assert.deepEqual(mergeSettings(parent, child, PROPERTY_TABLE), {
    wwwroot: '/b',
    proxyTo: ['http://b'],
    blocklist: ['192.0.2.1'],
    rewriteMap: [
      { regex: '^/a', replacement: '/b' },
      { regex: '^/c', replacement: '/d' },
    ],
    customHeaders: { 'X-A': '1', 'X-B': 'child', 'X-C': '3' },
    timeout: null,
  });
  assert.deepEqual(parent.customHeaders, { 'X-A': '1', 'X-B': '2' }, 'the parent is not changed');
});

it('a respond object and an indexFiles list replace the inherited ones; setHeaders and mimeTypes extend, removeHeaders concatenates', () => {
  const parent = {
    respond: { status: 503, body: 'maintenance' },
    indexFiles: ['index.html'],
    setHeaders: { 'X-A': 'host' },
    removeHeaders: ['X-Powered-By'],
    mimeTypes: { '.log': 'text/plain' },
  };
  const child = {
    respond: { abort: true },
    indexFiles: ['default.htm'],
    setHeaders: { 'X-B': 'location' },
    removeHeaders: ['Server'],
    mimeTypes: { '.wasm': 'application/wasm' },
  };
  assert.deepEqual(mergeSettings(parent, child, PROPERTY_TABLE), {
    respond: { abort: true },
    indexFiles: ['default.htm'],
    setHeaders: { 'X-A': 'host', 'X-B': 'location' },
    removeHeaders: ['X-Powered-By', 'Server'],
    mimeTypes: { '.log': 'text/plain', '.wasm': 'application/wasm' },
  });
});

it('allow and deny are one rule list: a scope that sets either replaces both, as nginx', () => {
  const parent = { allow: ['10.0.0.0/8'], deny: ['10.0.0.66'] };
  assert.deepEqual(mergeSettings(parent, { deny: ['192.0.2.1'] }, PROPERTY_TABLE), {
    deny: ['192.0.2.1'],
  });
  assert.deepEqual(mergeSettings(parent, { allow: ['127.0.0.1'] }, PROPERTY_TABLE), {
    allow: ['127.0.0.1'],
  });
  assert.deepEqual(mergeSettings(parent, { wwwroot: '/b' }, PROPERTY_TABLE), {
    ...parent,
    wwwroot: '/b',
  });
});

it('rateLimit entries add up, each the very entry its scope wrote', () => {
  const host = { requests: 100, per: '1m' as const };
  const location = { requests: 10 };
  const merged = mergeSettings({ rateLimit: [host] }, { rateLimit: [location] }, PROPERTY_TABLE);
  assert.equal(merged.rateLimit?.[0], host);
  assert.equal(merged.rateLimit?.[1], location);
});
