// Reading configuration files through `include`: `{{env.NAME}}` in patterns, directories and links
// that cannot be read, literal paths that do not exist, files reached twice, the shape of included
// `global`, and files that are not UTF-8 — through real files in a temporary directory.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { formatDiagnostic } from '../../src/config/diagnostics.js';
import { loadConfig } from '../../src/config/load.js';
import { PROPERTY_TABLE } from '../../src/modules/registry.js';
import { runCli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'portico-include-hardening-'));
after(() => {
  // A directory left without permissions would stop its own removal.
  chmodSync(join(dir), 0o700);
  rmSync(dir, { recursive: true, force: true });
});

function files(tree: Record<string, string | Buffer>): string {
  const base = mkdtempSync(join(dir, 'case-'));
  for (const [name, content] of Object.entries(tree)) {
    mkdirSync(dirname(join(base, name)), { recursive: true });
    writeFileSync(join(base, name), content);
  }
  return base;
}

async function load(base: string, main: string, env: NodeJS.ProcessEnv = {}) {
  const result = await loadConfig(main, { properties: PROPERTY_TABLE, cwd: base, env });
  return {
    ...result,
    messages: result.diagnostics.map(formatDiagnostic),
    domains: result.config?.hosts.map((h) => h.settings.domain),
  };
}

describe('{{env.NAME}} in include patterns', () => {
  const tree = {
    'main.yaml': 'include: ["{{env.SITES}}/*.yaml"]\nhosts:\n  - domain: main.example\n',
    'main.kdl': 'host domain="main.example" {\n}\ninclude "{{env.SITES}}/*.yaml"\n',
    'sites/a.yaml': 'hosts:\n  - domain: a.example\n',
  };

  it('is replaced before the pattern is expanded, in YAML and in KDL', async () => {
    const base = files(tree);
    for (const main of ['main.yaml', 'main.kdl']) {
      const { messages, domains } = await load(base, main, { SITES: 'sites' });
      assert.deepEqual(messages, [], main);
      assert.deepEqual(domains, ['main.example', 'a.example'], main);
    }
  });

  it('refuses an unset variable there, naming the property', async () => {
    const base = files(tree);
    assert.deepEqual((await load(base, 'main.yaml')).messages, [
      'main.yaml:1:11: include[0]: environment variable SITES is not set (used as {{env.SITES}})',
    ]);
    assert.deepEqual((await load(base, 'main.kdl')).messages, [
      'main.kdl:3:9: include[0]: environment variable SITES is not set (used as {{env.SITES}})',
    ]);
  });

  it('lets convert go on without the variable, with a warning', async () => {
    const base = files(tree);
    const env = { ...process.env };
    delete env.SITES;
    const { code, stdout, stderr } = await runCli(['convert', 'main.yaml'], { cwd: base, env });
    assert.equal(code, 0, stderr);
    assert.equal(
      stderr,
      'main.yaml:1:11: warning: include[0]: not followed: environment variable SITES is not set (used as {{env.SITES}})\n',
    );
    assert.match(stdout, /^include "\{\{env\.SITES\}\}\/\*\.yaml"$/m);
  });
});

describe('unreadable includes', () => {
  it('refuses a directory a glob cannot read', async () => {
    const base = files({
      'portico.yaml': 'include: ["conf.d/*.yaml"]\n',
      'conf.d/a.yaml': 'hosts:\n  - domain: a.example\n',
    });
    chmodSync(join(base, 'conf.d'), 0o000);
    try {
      const { code, stderr } = await runCli(['validate', '-c', 'portico.yaml'], {
        cwd: base,
        asUser: true,
      });
      assert.equal(code, 1);
      assert.equal(
        stderr,
        'portico.yaml:1:11: include: cannot read the directory conf.d: permission denied (EACCES) (included via portico.yaml → conf.d/*.yaml)\nportico.yaml: 1 error, configuration not valid\n',
      );
    } finally {
      chmodSync(join(base, 'conf.d'), 0o700);
    }
  });

  it('refuses a literal include path that does not exist, or a dangling link, naming the chain', async () => {
    const base = files({
      'portico.yaml': 'include: [sub.yaml]\n',
      'sub.yaml': 'include: [dang.yaml, nothere.kdl]\n',
    });
    symlinkSync(join(base, 'gone.yaml'), join(base, 'dang.yaml'));
    const { messages, config } = await load(base, 'portico.yaml');
    assert.equal(config, undefined);
    assert.deepEqual(messages, [
      'sub.yaml:1:11: cannot read dang.yaml: no such file or directory (ENOENT) (included via portico.yaml → sub.yaml → dang.yaml)',
      'sub.yaml:1:22: cannot read nothere.kdl: no such file or directory (ENOENT) (included via portico.yaml → sub.yaml → nothere.kdl)',
    ]);
  });

  it('refuses a dangling link that a glob matches, and ignores one it does not', async () => {
    const base = files({
      'portico.yaml': 'include: ["conf.d/*.yaml"]\n',
      'conf.d/a.yaml': 'hosts:\n  - domain: a.example\n',
    });
    symlinkSync(join(base, 'gone'), join(base, 'conf.d/notes.txt'));
    assert.deepEqual((await load(base, 'portico.yaml')).messages, []);
    symlinkSync(join(base, 'gone.yaml'), join(base, 'conf.d/b.yaml'));
    assert.deepEqual((await load(base, 'portico.yaml')).messages, [
      'portico.yaml:1:11: cannot read conf.d/b.yaml: no such file or directory (ENOENT) (included via portico.yaml → conf.d/b.yaml)',
    ]);
  });

  it('still accepts a glob that matches nothing, even under a missing directory', async () => {
    const base = files({
      'portico.kdl': 'global {\n    port 8080\n}\ninclude "missing/*.kdl" "*.yaml"\n',
    });
    const { config, messages } = await load(base, 'portico.kdl');
    assert.deepEqual(messages, []);
    assert.equal(config!.global.port, 8080);
  });
});

describe('a file reached twice', () => {
  it('is refused, naming both ways to it', async () => {
    const base = files({
      'portico.yaml': 'include: [a.yaml, b.yaml]\n',
      'a.yaml': 'hosts:\n  - domain: a.example\n',
      'b.yaml': 'include: ["a.*"]\n',
    });
    const { messages, config } = await load(base, 'portico.yaml');
    assert.equal(config, undefined);
    assert.deepEqual(messages, [
      'b.yaml:1:11: include: a.yaml is included twice: portico.yaml → a.yaml, and portico.yaml → b.yaml → a.yaml',
    ]);
  });
});

describe('included global and hosts', () => {
  it('refuses a global that is not a mapping, in an included file as in the main one', async () => {
    const base = files({
      'portico.yaml': 'include: [x.yaml]\nglobal:\n  port: 8080\n',
      'x.yaml': 'global: "oops"\nhosts: 3\n',
      'main-bad.yaml': 'global: [1]\nhosts: 2\ninclude: [y.yaml]\n',
      'y.yaml': 'global:\n  timeout: 5\nhosts:\n  - domain: y.example\n',
    });
    assert.deepEqual((await load(base, 'portico.yaml')).messages, [
      'x.yaml:1:9: global: expected a mapping of properties, got "oops"',
      'x.yaml:2:8: hosts: expected a list of hosts, got 3',
    ]);
    assert.deepEqual((await load(base, 'main-bad.yaml')).messages, [
      'main-bad.yaml:1:9: global: expected a mapping of properties, got a list',
      'main-bad.yaml:2:8: hosts: expected a list of hosts, got 2',
    ]);
  });
});

describe('file encodings', () => {
  it('refuses bytes that are not UTF-8, at the first bad byte', async () => {
    const base = files({
      'latin1.yaml': Buffer.from('global:\n  wwwroot: "/srv/caf\xe9"\n', 'latin1'),
      'portico.yaml': 'include: [latin1.yaml]\n',
    });
    const { code, stderr } = await runCli(['validate', '-c', 'latin1.yaml'], { cwd: base });
    assert.equal(code, 1);
    assert.equal(
      stderr,
      'latin1.yaml:2:21: not valid UTF-8 (byte 0xE9); save the file as UTF-8\nlatin1.yaml: 1 error, configuration not valid\n',
    );
    assert.deepEqual((await load(base, 'portico.yaml')).messages, [
      'latin1.yaml:2:21: not valid UTF-8 (byte 0xE9); save the file as UTF-8',
    ]);
  });

  it('counts the column of a bad byte in characters', async () => {
    const base = files({
      'p.kdl': Buffer.concat([
        Buffer.from('global {\n    wwwroot "/𝄞é/'),
        Buffer.from([0xc3, 0x28]),
        Buffer.from('"\n}\n'),
      ]),
    });
    assert.deepEqual((await load(base, 'p.kdl')).messages, [
      'p.kdl:2:18: not valid UTF-8 (byte 0xC3); save the file as UTF-8',
    ]);
  });

  it('names UTF-16 by its byte order mark, and a NUL byte without one', async () => {
    const text = 'global:\n  port: 8080\n';
    const base = files({
      'le.yaml': Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]),
      'be.kdl': Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text, 'utf16le').swap16()]),
      'nobom.yaml': Buffer.from(text, 'utf16le'),
    });
    assert.deepEqual((await load(base, 'le.yaml')).messages, [
      'le.yaml:1:1: the file is UTF-16LE (it starts with that byte order mark); save it as UTF-8',
    ]);
    assert.deepEqual((await load(base, 'be.kdl')).messages, [
      'be.kdl:1:1: the file is UTF-16BE (it starts with that byte order mark); save it as UTF-8',
    ]);
    assert.deepEqual((await load(base, 'nobom.yaml')).messages, [
      'nobom.yaml:1:2: a NUL byte; is the file UTF-16 without a byte order mark? save it as UTF-8',
    ]);
  });

  it('accepts a UTF-8 byte order mark, without shifting columns', async () => {
    const base = files({
      'bom.yaml': '\ufeffglobal: {prot: 1}\n',
      'bom.kdl': '\ufeffglobal { prot 1; }\n',
      'ok.yaml': '\ufeffglobal:\n  port: 8080\n',
    });
    assert.deepEqual((await load(base, 'bom.yaml')).messages, [
      'bom.yaml:1:10: warning: global.prot: unknown property, ignored; did you mean "port"?',
    ]);
    assert.deepEqual((await load(base, 'bom.kdl')).messages, [
      'bom.kdl:1:10: warning: global.prot: unknown property, ignored; did you mean "port"?',
    ]);
    const { code, stdout, stderr } = await runCli(['convert', 'ok.yaml'], { cwd: base });
    assert.equal(stderr, '');
    assert.equal(code, 0);
    assert.equal(stdout, 'global {\n    port 8080\n}\n');
  });
});

describe('unset environment variables', () => {
  it('are named with the property that holds them', async () => {
    const base = files({
      'portico.yaml':
        'global:\n  loadModules: [rproxy]\n  admin:\n    auth_token: "{{env.TOKEN}}"\nhosts:\n  - domain: a.example\n    locations:\n      - path: /api\n        proxyTo: ["http://{{env.BACKEND}}:1"]\n',
    });
    assert.deepEqual((await load(base, 'portico.yaml')).messages, [
      'portico.yaml:4:17: global.admin.auth_token: environment variable TOKEN is not set (used as {{env.TOKEN}})',
      'portico.yaml:9:19: hosts[0].locations[0].proxyTo[0]: environment variable BACKEND is not set (used as {{env.BACKEND}})',
    ]);
  });
});

describe('the configuration file found by default', () => {
  it('is a dangling link reported as such, not replaced by the built-in default', async () => {
    const base = files({});
    symlinkSync(join(base, 'gone.yaml'), join(base, 'portico.yaml'));
    const { code, stdout, stderr } = await runCli(['validate'], { cwd: base });
    assert.equal(stdout, '');
    assert.equal(code, 1);
    assert.match(
      stderr,
      /^portico\.yaml:1:1: cannot read portico\.yaml: no such file or directory \(ENOENT\)\n/,
    );
  });
});
