// The KDL front end's positions and paths: columns stay exact after the `;` it inserts before `}`
// for KDL 1.0, count characters, and every message names the property by its model path.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatDiagnostic } from '../../src/config/diagnostics.js';
import { loadConfigText } from '../../src/config/load.js';
import { PROPERTY_TABLE } from '../../src/modules/registry.js';
import { cpuClock } from '../helpers/cpu.js';

function messages(text: string, env: NodeJS.ProcessEnv = {}): string[] {
  return loadConfigText(text, 'kdl', 't.kdl', { properties: PROPERTY_TABLE, env }).diagnostics.map(
    formatDiagnostic,
  );
}

describe('KDL positions', () => {
  it('stay exact after blocks closed on the same line', () => {
    assert.deepEqual(
      messages('host domain="a.com" { wwwroot "/x" }; host domain="b.com" { port 1 }\n'),
      ['t.kdl:1:61: hosts[1].port: not valid in a host; it belongs in global'],
    );
    assert.deepEqual(
      messages(
        'global { port 1 }; host domain="a" { wwwroot "/a" }; host domain="b" { location "/x" { wwwroot "/b" }; bogus 2 }\n',
      ),
      ['t.kdl:1:104: warning: hosts[1].bogus: unknown property, ignored'],
    );
  });

  it('stay exact for a syntax error after such blocks', () => {
    assert.deepEqual(messages('global { a { b 1 } } host domain="x" { wwwroot "/y" }\n'), [
      't.kdl:1:22: KDL syntax: Missing node terminator',
    ]);
  });

  it('count columns in characters', () => {
    assert.deepEqual(messages('global { wwwroot "𝄞𝄞"; prot 1 }\n'), [
      't.kdl:1:24: warning: global.prot: unknown property, ignored; did you mean "port"?',
    ]);
  });
});

describe('KDL paths', () => {
  it('name host properties, nested blocks and misused nodes by their model path', () => {
    assert.deepEqual(
      messages(
        'host domain="a.com" foo=1 {\n  location "/a" {\n    location "/b" { }\n  }\n}\nhost domain="b.com" {\n  errorConfig 404 { }\n  customHeaders "X"\n}\n',
      ),
      [
        't.kdl:1:21: hosts[0].foo: a host takes only domain= and ip= as properties; write other properties as children',
        't.kdl:3:5: hosts[0].locations[0].location: location blocks belong directly inside a host',
        't.kdl:7:3: hosts[1].errorConfig[0]: write errorConfig scode=404 { … }',
        't.kdl:8:3: hosts[1].customHeaders: customHeaders takes children { … }, not arguments',
      ],
    );
  });

  it('report a node without its value once, with its path', () => {
    assert.deepEqual(
      messages(
        'global {\n  admin {\n    auth_token\n  }\n  users name="a" pass="b"\n  users name="c" pass="d" colour=1\n}\n',
      ),
      [
        't.kdl:3:5: global.admin.auth_token: expects a value',
        't.kdl:6:27: global.users[1].colour: unknown field of user',
      ],
    );
  });

  it('suggest the KDL name of a block', () => {
    assert.deepEqual(
      messages('host domain="a.com" {\n  locaton "/a" { }\n  erorConfig scode=404 { }\n}\n'),
      [
        't.kdl:2:3: warning: hosts[0].locaton: unknown property, ignored; did you mean "location"?',
        't.kdl:3:3: warning: hosts[0].erorConfig: unknown property, ignored; did you mean "errorConfig"?',
      ],
    );
  });

  it('name the property that holds an unset environment variable', () => {
    assert.deepEqual(
      messages(
        'global {\n    admin {\n        auth_token "{{env.PORTICO_TEST_UNSET}}"\n    }\n}\nhost domain="a.example" {\n    location "/" {\n        wwwroot "/srv/{{env.PORTICO_TEST_UNSET}}"\n    }\n}\n',
      ),
      [
        't.kdl:3:20: global.admin.auth_token: environment variable PORTICO_TEST_UNSET is not set (used as {{env.PORTICO_TEST_UNSET}})',
        't.kdl:8:17: hosts[0].locations[0].wwwroot: environment variable PORTICO_TEST_UNSET is not set (used as {{env.PORTICO_TEST_UNSET}})',
      ],
    );
  });
});

describe('KDL names and text in messages', () => {
  it('clip a megabyte node name, quickly', () => {
    const name = 'a'.repeat(1e6);
    const clipped = `${'a'.repeat(80)}…`;
    const cpu = cpuClock();
    assert.deepEqual(
      messages(
        `global {\n    ${name} 1\n}\n${name} 2\nhost domain="x" ${name}=1 {\n    customHeaders { ${name} "v" { c 1 } }\n}\n`,
      ),
      [
        `t.kdl:2:5: warning: global.${clipped}: unknown property, ignored`,
        `t.kdl:4:1: warning: ${clipped}: unknown top-level node, ignored (expected global, host or include)`,
        `t.kdl:5:17: hosts[0].${clipped}: a host takes only domain= and ip= as properties; write other properties as children`,
        `t.kdl:6:1000028: hosts[0].customHeaders.${clipped}: ${clipped} takes arguments, not children`,
      ],
    );
    assert.ok(cpu() < 3000, 'took too long');
  });

  it('quote no text of the file in a syntax error, where a secret cannot be told from other text', () => {
    // `#true` makes these files KDL 2.0, whose parser quotes the offending token.
    const cases: [string, string][] = [
      ['auth_token #s3cret', 'Invalid keyword, surround it with quotes to use a string'],
      ['auth_token #S3cret', 'Invalid keyword, surround it with quotes to use a string'],
      ['auth_token #True', 'Invalid keyword: keywords are case sensitive'],
      ['auth_token "x\\u{s3cret}"', 'Invalid unicode escape'],
      ['auth_token "x\\qs3cret"', 'Invalid escape'],
      ['auth_token "x" \\ s3cret', 'Expected newline or single-line comment after backslash'],
      [
        `auth_token #${'s3cret'.repeat(2e5)}`,
        'Invalid keyword, surround it with quotes to use a string',
      ],
    ];
    for (const [line, expected] of cases) {
      const [only, ...rest] = messages(
        `global {\n    admin {\n        health #true\n        ${line}\n    }\n}\n`,
      );
      assert.deepEqual(rest, [], line.slice(0, 40));
      assert.match(only!, /^t\.kdl:4:\d+: KDL syntax: /);
      assert.equal(only!.replace(/^t\.kdl:4:\d+: KDL syntax: /, ''), expected);
    }
    assert.deepEqual(messages('global { admin { health #true } }\ninclude 1s3cret\n'), [
      't.kdl:2:10: KDL syntax: Unexpected token, did you forget to quote an identifier?',
    ]);
    assert.deepEqual(messages('global { port 1 }\n}\n'), [
      't.kdl:2:1: KDL syntax: Unexpected token "}", did you forget to quote an identifier?',
    ]);
  });
});
