// The command line as CONTRACT.md describes it: help, version, config discovery, convert, schema.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parse } from 'yaml';
import { ROOT, runCli } from '../helpers/cli.js';

const VERSION = (
  JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }
).version;
const tmp = mkdtempSync(join(tmpdir(), 'portico-cli-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

describe('portico command line', () => {
  it('--version and --help', async () => {
    assert.deepEqual(await runCli(['--version']), {
      code: 0,
      stdout: `portico ${VERSION}\n`,
      stderr: '',
    });
    const help = await runCli(['--help']);
    assert.equal(help.code, 0);
    for (const command of ['run', 'validate', 'explain', 'convert', 'passwd', 'schema'])
      assert.match(help.stdout, new RegExp(`^  ${command}`, 'm'));
  });

  it('refuses unknown commands and options with exit 2', async () => {
    const unknown = await runCli(['serve']);
    assert.equal(unknown.code, 2);
    assert.equal(unknown.stderr, 'portico serve: unknown command (see portico --help)\n');
    const option = await runCli(['validate', '--bogus']);
    assert.equal(option.code, 2);
    assert.match(option.stderr, /^portico validate: Unknown option '--bogus'/);
  });

  it('validate finds portico.kdl before portico.yaml, and falls back to the built-in default', async () => {
    const dir = mkdtempSync(join(tmp, 'discover-'));
    assert.deepEqual(await runCli(['validate'], { cwd: dir }), {
      code: 0,
      stdout:
        'no configuration file (portico.kdl, portico.yaml or portico.yml) here: checked the built-in default\nconfiguration OK\n',
      stderr: '',
    });
    writeFileSync(join(dir, 'portico.yaml'), 'global:\n  port: 0\n');
    assert.equal(
      (await runCli(['validate'], { cwd: dir })).stderr.split('\n')[0],
      'portico.yaml:2:9: global.port: 0 is out of range for a port (1–65535)',
    );
    writeFileSync(join(dir, 'portico.kdl'), 'global {\n    port 70000\n}\n');
    assert.equal(
      (await runCli(['validate'], { cwd: dir })).stderr.split('\n')[0],
      'portico.kdl:2:10: global.port: 70000 is out of range for a port (1–65535)',
    );
  });

  it('convert turns YAML into KDL and back, keeping includes and placeholders', async () => {
    const dir = mkdtempSync(join(tmp, 'convert-'));
    writeFileSync(
      join(dir, 'site.yaml'),
      'global:\n  port: 8080\n  admin:\n    auth_token: "{{env.NOT_SET_HERE}}"\nhosts:\n  - domain: example.com\n    wwwroot: /srv/www\ninclude: ["conf.d/*.yaml"]\n',
    );
    const kdl = await runCli(['convert', 'site.yaml'], { cwd: dir });
    assert.equal(kdl.stderr, '');
    assert.equal(kdl.code, 0);
    assert.equal(
      kdl.stdout,
      'global {\n    port 8080\n    admin {\n        auth_token "{{env.NOT_SET_HERE}}"\n    }\n}\n\nhost domain="example.com" {\n    wwwroot "/srv/www"\n}\n\ninclude "conf.d/*.yaml"\n',
    );
    writeFileSync(join(dir, 'site.kdl'), kdl.stdout);
    const yaml = await runCli(['convert', 'site.kdl', '--to', 'yaml'], { cwd: dir });
    assert.equal(yaml.code, 0);
    assert.deepEqual(parse(yaml.stdout), parse(readFileSync(join(dir, 'site.yaml'), 'utf8')));
  });

  it('convert keeps comments, both ways, and never takes a # or // inside a string for one', async () => {
    const dir = mkdtempSync(join(tmp, 'convert-comments-'));
    writeFileSync(
      join(dir, 'site.yaml'),
      [
        '# Portico for the shop',
        'global:',
        '  port: 8080 # plain HTTP',
        '  # the files',
        '  wwwroot: "/srv/www # not a comment"',
        'hosts:',
        '  # the shop',
        '  - domain: shop.test',
        '    locations:',
        '      # the API',
        '      - path: /api',
        '        proxyTo: ["http://127.0.0.1:3000//x"]',
        '# the end',
        '',
      ].join('\n'),
    );
    const kdl = await runCli(['convert', 'site.yaml'], { cwd: dir });
    assert.equal(kdl.code, 0, kdl.stderr);
    assert.equal(
      kdl.stdout,
      [
        '// Portico for the shop',
        'global {',
        '    // plain HTTP',
        '    port 8080',
        '    // the files',
        '    wwwroot "/srv/www # not a comment"',
        '}',
        '',
        '// the shop',
        'host domain="shop.test" {',
        '    // the API',
        '    location "/api" {',
        '        proxyTo "http://127.0.0.1:3000//x"',
        '    }',
        '}',
        '',
        '// the end',
        '',
      ].join('\n'),
    );
    writeFileSync(join(dir, 'site.kdl'), kdl.stdout);
    const yaml = await runCli(['convert', 'site.kdl'], { cwd: dir });
    assert.equal(yaml.code, 0, yaml.stderr);
    for (const comment of [
      '# Portico for the shop',
      '  # plain HTTP',
      '  # the files',
      '# the shop',
      '# the API',
      '# the end',
    ])
      assert.ok(yaml.stdout.includes(`${comment}\n`), `${comment} in\n${yaml.stdout}`);
    assert.deepEqual(parse(yaml.stdout), parse(readFileSync(join(dir, 'site.yaml'), 'utf8')));
  });

  it('convert refuses an invalid file with its errors, and a wrong --to', async () => {
    const dir = mkdtempSync(join(tmp, 'convert-bad-'));
    writeFileSync(join(dir, 'bad.yaml'), 'global:\n  secure: maybe\n');
    assert.deepEqual(await runCli(['convert', 'bad.yaml'], { cwd: dir }), {
      code: 1,
      stdout: '',
      stderr: 'bad.yaml:2:11: global.secure: expected a boolean, got "maybe"\n',
    });
    assert.equal((await runCli(['convert', 'bad.yaml', '--to', 'json'], { cwd: dir })).code, 2);
    assert.equal((await runCli(['convert', 'notes.txt'], { cwd: dir })).code, 1);
  });

  it('messages a person can act on (issue 16 point 8)', async () => {
    const dir = mkdtempSync(join(tmp, 'messages-'));
    // validate FILE, as convert FILE; the file given twice is refused.
    writeFileSync(
      join(dir, 'site.yaml'),
      `global:\n  wwwroot: ${join(dir, 'missing')}\n  errorPages:\n    - scode: 404\n      path: ${join(dir, '404.html')}\n  secure: true\n  cert: ${join(dir, 'a.crt')}\n  key: ${join(dir, 'a.key')}\n`,
    );
    const checked = await runCli(['validate', 'site.yaml'], { cwd: dir });
    assert.equal(checked.code, 1);
    assert.equal(
      checked.stderr,
      [
        `site.yaml:2:12: warning: global.wwwroot: ${join(dir, 'missing')}: no such file or directory (ENOENT); static files here will be answered 404`,
        `site.yaml:4:7: warning: global.errorPages[0].path: ${join(dir, '404.html')}: no such file or directory (ENOENT); the default page will be sent for 404`,
        `site.yaml:7:3: global.cert: cannot read the certificate ${join(dir, 'a.crt')}: no such file or directory (ENOENT)`,
        // The key's path is shown: only /config hides it.
        `site.yaml:8:3: global.key: cannot read the private key ${join(dir, 'a.key')}: no such file or directory (ENOENT)`,
        'site.yaml: 2 errors, configuration not valid',
        '',
      ].join('\n'),
    );
    assert.equal(
      (await runCli(['validate', '-c', 'site.yaml', 'site.yaml'], { cwd: dir })).code,
      2,
    );
    // An unclosed KDL block is named, with where it opens.
    writeFileSync(join(dir, 'open.kdl'), 'global {\n    admin {\n        listen 8081\n');
    assert.equal(
      (await runCli(['validate', 'open.kdl'], { cwd: dir })).stderr.split('\n')[0],
      'open.kdl:2:11: KDL syntax: the file ends inside a block: a closing } is missing for admin (line 2), global (line 1)',
    );
  });

  it('schema | head exits quietly when the reader stops early', async () => {
    const { spawnSync } = await import('node:child_process');
    const piped = spawnSync(
      'sh',
      ['-c', `"${process.execPath}" bin/portico.js schema | head -c 1`],
      {
        cwd: ROOT,
        encoding: 'utf8',
      },
    );
    assert.equal(piped.stdout, '{');
    assert.equal(piped.stderr, '');
  });

  it('schema prints the JSON Schema', async () => {
    const { code, stdout } = await runCli(['schema']);
    assert.equal(code, 0);
    const schema = JSON.parse(stdout) as {
      definitions: Record<string, { properties: Record<string, unknown> }>;
    };
    assert.ok(schema.definitions.global?.properties.port);
    assert.ok(schema.definitions.location?.properties.proxyTo);
    assert.equal(schema.definitions.host?.properties.port, undefined);
  });
});
