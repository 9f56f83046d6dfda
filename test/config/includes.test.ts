// `include`: globs relative to the including file, merge order, cycles and unreadable files, mixed
// syntaxes, and `{{env.NAME}}` interpolation — through real files in a temporary directory.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { formatDiagnostic } from '../../src/config/diagnostics.js';
import { loadConfig } from '../../src/config/load.js';
import { configToPlain } from '../../src/config/shape.js';
import { PROPERTY_TABLE } from '../../src/modules/registry.js';
import { runCli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'portico-includes-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function files(tree: Record<string, string>): string {
  const base = mkdtempSync(join(dir, 'case-'));
  for (const [name, text] of Object.entries(tree)) {
    mkdirSync(dirname(join(base, name)), { recursive: true });
    writeFileSync(join(base, name), text);
  }
  return base;
}

async function load(base: string, main: string, env: NodeJS.ProcessEnv = {}) {
  const result = await loadConfig(main, { properties: PROPERTY_TABLE, cwd: base, env });
  return { ...result, messages: result.diagnostics.map(formatDiagnostic) };
}

describe('include', () => {
  it('resolves globs relative to the including file, in name order, across syntaxes', async () => {
    const base = files({
      'portico.yaml':
        'global:\n  port: 8080\ninclude:\n  - conf.d/*.yaml\n  - sites/*.kdl\nhosts:\n  - domain: main.example\n',
      'conf.d/10-a.yaml': 'hosts:\n  - domain: a.example\ninclude: [../nested/*.yaml]\n',
      'conf.d/20-b.yaml': 'hosts:\n  - domain: b.example\n',
      'nested/x.yaml': 'hosts:\n  - domain: nested.example\n',
      'sites/c.kdl': 'host domain="c.example" {\n    wwwroot "/srv/c"\n}\n',
    });
    const { config, messages, files: read } = await load(base, 'portico.yaml');
    assert.deepEqual(messages, []);
    assert.deepEqual(
      config!.hosts.map((h) => h.settings.domain),
      ['main.example', 'a.example', 'nested.example', 'b.example', 'c.example'],
    );
    assert.equal(read.length, 5);
  });

  it('merges included global keys under the includer, the later include winning, and says so', async () => {
    const base = files({
      'portico.yaml': 'global:\n  port: 8080\ninclude: ["*.d/*.yaml"]\n',
      'g.d/1.yaml': 'global:\n  port: 9000\n  timeout: 1000\n  shutdownTimeout: 1\n',
      'g.d/2.yaml': 'global:\n  timeout: 2000\n',
    });
    const { config, messages } = await load(base, 'portico.yaml');
    assert.deepEqual(configToPlain(config!).global, {
      port: 8080,
      timeout: 2000,
      shutdownTimeout: 1,
    });
    assert.deepEqual(messages, [
      'g.d/1.yaml:2:3: warning: global.port: overridden by portico.yaml:2:3',
    ]);
  });

  it('accepts a glob that matches nothing', async () => {
    const base = files({ 'portico.kdl': 'global {\n    port 8080\n}\ninclude "missing/*.kdl"\n' });
    const { config, messages } = await load(base, 'portico.kdl');
    assert.deepEqual(messages, []);
    assert.equal(config!.global.port, 8080);
  });

  it('refuses an include cycle, naming the chain', async () => {
    const base = files({
      'portico.yaml': 'include: [a.yaml]\n',
      'a.yaml': 'include: [b.kdl]\n',
      'b.kdl': 'include "portico.yaml"\n',
    });
    const { config, messages } = await load(base, 'portico.yaml');
    assert.equal(config, undefined);
    assert.deepEqual(messages, [
      'b.kdl:1:9: include: include cycle: portico.yaml → a.yaml → b.kdl → portico.yaml',
    ]);
  });

  it('refuses an unreadable included file, naming the chain', async () => {
    const base = files({
      'portico.yaml': 'include: [sub.yaml]\n',
      'sub.yaml': 'include: [secret.yaml]\n',
      'secret.yaml': 'global: {}\n',
    });
    chmodSync(join(base, 'secret.yaml'), 0o000);
    const { code, stderr } = await runCli(['validate', '-c', 'portico.yaml'], {
      cwd: base,
      asUser: true,
    });
    assert.equal(code, 1);
    assert.equal(
      stderr.split('\n')[0],
      'sub.yaml:1:11: cannot read secret.yaml: permission denied (EACCES) (included via portico.yaml → sub.yaml → secret.yaml)',
    );
  });

  it('reports errors in included files with their own positions, and unknown top-level keys there', async () => {
    const base = files({
      'portico.yaml': 'include: [x.yaml]\n',
      'x.yaml': 'global:\n  port: 0\nhostz: []\n',
    });
    const { messages } = await load(base, 'portico.yaml');
    assert.deepEqual(messages, [
      'x.yaml:2:9: global.port: 0 is out of range for a port (1–65535)',
      'x.yaml:3:1: warning: hostz: unknown top-level key, ignored; did you mean "hosts"? (expected global, hosts or include)',
    ]);
  });

  it('names a missing main file', async () => {
    const base = files({});
    const { messages } = await load(base, 'nope.yaml');
    assert.deepEqual(messages, [
      'nope.yaml:1:1: cannot read nope.yaml: no such file or directory (ENOENT)',
    ]);
  });
});

describe('{{env.NAME}}', () => {
  it('interpolates strings in both syntaxes, and refuses unset variables', async () => {
    const base = files({
      'portico.yaml':
        'global:\n  port: "{{env.PORT}}"\n  wwwroot: "/srv/{{ env.SITE }}/public"\ninclude: [b.kdl]\n',
      'b.kdl': 'host domain="{{env.DOMAIN}}" {\n    wwwroot "{{env.MISSING_ONE}}"\n}\n',
    });
    const ok = await load(base, 'portico.yaml', {
      PORT: '8081',
      SITE: 'blog',
      DOMAIN: 'blog.example',
      MISSING_ONE: '/x',
    });
    assert.deepEqual(ok.messages, []);
    assert.deepEqual(configToPlain(ok.config!), {
      global: { port: '8081', wwwroot: '/srv/blog/public' },
      hosts: [{ domain: 'blog.example', wwwroot: '/x' }],
    });
    const bad = await load(base, 'portico.yaml', {
      PORT: '8081',
      SITE: 'blog',
      DOMAIN: 'blog.example',
    });
    assert.equal(bad.config, undefined);
    assert.deepEqual(bad.messages, [
      'b.kdl:2:13: hosts[0].wwwroot: environment variable MISSING_ONE is not set (used as {{env.MISSING_ONE}})',
    ]);
  });
});
