// The YAML front end against hostile or unusual files: alias bombs and many aliases, duplicate
// keys, several documents, empty files, and columns on lines with characters outside the BMP.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { formatDiagnostic } from '../../src/config/diagnostics.js';
import { loadConfig, loadConfigText } from '../../src/config/load.js';
import { PROPERTY_TABLE } from '../../src/modules/registry.js';
import { runCli } from '../helpers/cli.js';
import { cpuClock } from '../helpers/cpu.js';

const dir = mkdtempSync(join(tmpdir(), 'portico-yaml-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function messages(text: string): string[] {
  return loadConfigText(text, 'yaml', 't.yaml', {
    properties: PROPERTY_TABLE,
    env: {},
  }).diagnostics.map(formatDiagnostic);
}

function manyAliases(count: number): string {
  return `global:\n  blocklist: [&a "192.0.2.1", ${Array(count).fill('*a').join(',')}]\n`;
}

describe('YAML aliases', () => {
  it('validates a file of 200,000 aliases in linear time and names the one alias that crosses the bound', async () => {
    writeFileSync(join(dir, 'many.yaml'), manyAliases(200_000));
    const cpu = cpuClock();
    const { code, stderr } = await runCli(['validate', '-c', 'many.yaml'], { cwd: dir });
    assert.ok(cpu() < 15_000, `took ${cpu()} ms`);
    assert.equal(code, 1);
    assert.equal(
      stderr,
      'many.yaml:2:300031: global.blocklist[100001]: YAML aliases expand to more than 100000 nodes by this *a; refusing the file (a guard against alias bombs)\n' +
        'many.yaml: 1 error, configuration not valid\n',
    );
  });

  it('stops a "billion laughs" file at the first alias that crosses the bound', () => {
    let text = 'a0: &a0 ["x","x","x","x","x","x","x","x","x","x"]\n';
    for (let i = 1; i < 10; i++)
      text += `a${i}: &a${i} [${Array(10)
        .fill(`*a${i - 1}`)
        .join(',')}]\n`;
    const cpu = cpuClock();
    assert.deepEqual(messages(text), [
      't.yaml:5:38: a4[7]: YAML aliases expand to more than 100000 nodes by this *a3; refusing the file (a guard against alias bombs)',
    ]);
    assert.ok(cpu() < 5_000);
  });

  it('still reads a file of many small aliases', () => {
    const { config, diagnostics } = loadConfigText(manyAliases(20_000), 'yaml', 't.yaml', {
      properties: PROPERTY_TABLE,
      env: {},
    });
    assert.deepEqual(diagnostics, []);
    assert.equal(config!.global.blocklist!.length, 20_001);
  });

  it('refuses an alias without an anchor before it, or inside its own anchor, once each', () => {
    assert.deepEqual(messages('global:\n  blocklist: *nope\n'), [
      't.yaml:2:14: global.blocklist: YAML alias *nope cannot be resolved: no anchor &nope before it',
    ]);
    assert.deepEqual(
      messages('global:\n  blocklist: &a ["192.0.2.1", *a]\nhosts:\n  - blocklist: *a\n'),
      [
        't.yaml:2:31: global.blocklist[1]: YAML alias *a cannot be resolved: it is inside its own anchor &a',
      ],
    );
  });

  it('resolves an alias to the latest anchor of its name before it', () => {
    const { config, diagnostics } = loadConfigText(
      'global:\n  wwwroot: &r /one\n  serverAdministratorEmail: &r a@example.com\nhosts:\n  - domain: a.example\n    serverAdministratorEmail: *r\n',
      'yaml',
      't.yaml',
      { properties: PROPERTY_TABLE, env: {} },
    );
    assert.deepEqual(diagnostics, []);
    assert.equal(config!.hosts[0]!.settings.serverAdministratorEmail, 'a@example.com');
  });
});

describe('YAML duplicate keys', () => {
  it('reports the duplicate where it is and goes on validating the rest', () => {
    assert.deepEqual(
      messages(
        'global:\n  port: 80\n  port: 81\n  Port: 3\nhosts:\n  - domain: a.example\n    domain: b.example\n    wwwroot: 1\n',
      ),
      [
        't.yaml:3:3: global.port: set twice (first at 2:3)',
        't.yaml:4:3: warning: global.Port: unknown property, ignored; did you mean "port"?',
        't.yaml:7:5: hosts[0].domain: set twice (first at 6:5)',
        't.yaml:8:14: hosts[0].wwwroot: expected a string, got 1',
      ],
    );
  });

  it('checks a mapping of 50,000 keys quickly', () => {
    const text = `global:\n  environmentVariables:\n${Array.from({ length: 50_000 }, (_, i) => `    K${i}: v\n`).join('')}`;
    const cpu = cpuClock();
    assert.deepEqual(messages(text), []);
    assert.ok(cpu() < 5_000, `took ${cpu()} ms`);
  });
});

describe('YAML documents', () => {
  it('reads the first document of several and warns that the others are ignored', () => {
    const { config, diagnostics } = loadConfigText(
      'global:\n  port: 8081\n---\nglobal:\n  port: 0\n',
      'yaml',
      't.yaml',
      { properties: PROPERTY_TABLE, env: {} },
    );
    assert.equal(config!.global.port, 8081);
    assert.deepEqual(diagnostics.map(formatDiagnostic), [
      't.yaml:3:1: warning: only the first YAML document is read; this one and any after it are ignored',
    ]);
  });

  it('still refuses a syntax error in a later document, as Ferron does', () => {
    assert.deepEqual(messages('global:\n  port: 8081\n---\nglobal: [\n'), [
      't.yaml:5:1: YAML syntax: Flow sequence in block collection must be sufficiently indented and end with a ]',
    ]);
  });

  it('refuses a file without a document, main or included; a lone "---" is an empty document', async () => {
    const empty =
      't.yaml:1:1: the file holds no YAML document (an empty file is not a configuration; write "global: {}" for all defaults)';
    assert.deepEqual(messages(''), [empty]);
    assert.deepEqual(messages('# nothing but a comment\n\n'), [empty]);
    assert.deepEqual(messages('---\n'), []);
    writeFileSync(join(dir, 'main.yaml'), 'include: [empty.yaml]\n');
    writeFileSync(join(dir, 'empty.yaml'), '# to be written\n');
    const included = await loadConfig('main.yaml', {
      properties: PROPERTY_TABLE,
      cwd: dir,
      env: {},
    });
    assert.deepEqual(included.diagnostics.map(formatDiagnostic), [
      empty.replace('t.yaml', 'empty.yaml'),
    ]);
  });
});

describe('YAML positions', () => {
  it('counts columns in Unicode characters, not UTF-16 code units', () => {
    assert.deepEqual(messages('global: {wwwroot: "𝄞𝄞", prot: 1}\n'), [
      't.yaml:1:25: warning: global.prot: unknown property, ignored; did you mean "port"?',
    ]);
    assert.deepEqual(messages('global:\n  wwwroot: "𝄞"\n  "𝄞x": 1\n  prot: 1\n'), [
      't.yaml:3:3: warning: global.𝄞x: unknown property, ignored',
      't.yaml:4:3: warning: global.prot: unknown property, ignored; did you mean "port"?',
    ]);
  });
});
