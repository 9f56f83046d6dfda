// `convert` writes every string so that its own KDL reader takes it back unchanged: characters KDL
// forbids in strings (controls, bidirectional marks, a byte order mark, line separators) are escaped.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { toKdl, toYaml } from '../../src/config/convert.js';
import { formatDiagnostic } from '../../src/config/diagnostics.js';
import { kdlString } from '../../src/config/kdl-write.js';
import { loadConfigText, type Syntax } from '../../src/config/load.js';
import { PROPERTY_TABLE } from '../../src/modules/registry.js';
import { runCli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'portico-convert-escapes-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const AWKWARD = [
  ...[
    '\u202a',
    '\u202b',
    '\u202c',
    '\u202d',
    '\u202e',
    '\u2066',
    '\u2067',
    '\u2068',
    '\u2069',
    '\u200e',
    '\u200f',
  ],
  ...[
    '\ufeff',
    '\u0085',
    '\u2028',
    '\u2029',
    '\u000b',
    '\u000c',
    '\u001b',
    '\u007f',
    '\u009f',
    '\ud800',
  ],
];

function load(text: string, syntax: Syntax) {
  const result = loadConfigText(text, syntax, `t.${syntax}`, {
    properties: PROPERTY_TABLE,
    env: {},
  });
  assert.ok(
    result.config && result.raw,
    `${result.diagnostics.map(formatDiagnostic).join('\n')}\n${text}`,
  );
  return { env: result.config.global.environmentVariables, raw: result.raw };
}

describe('convert escapes what KDL forbids in strings', () => {
  it('round-trips every awkward character through KDL and back to YAML', () => {
    const values = Object.fromEntries(AWKWARD.map((ch, i) => [`V${i}`, `a${ch}b`]));
    const yaml = `global:\n  environmentVariables:\n${Object.entries(values)
      .map(
        ([k, v]) =>
          `    ${k}: "${[...v].map((c) => (c >= ' ' && c <= '~' ? c : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)).join('')}"`,
      )
      .join('\n')}\n`;
    const fromYaml = load(yaml, 'yaml');
    assert.deepEqual(fromYaml.env, values);
    const kdl = toKdl(fromYaml.raw, PROPERTY_TABLE);
    assert.match(kdl, /^[\x20-\x7e\n]*$/, 'only printable ASCII is written for these');
    const fromKdl = load(kdl, 'kdl');
    assert.deepEqual(fromKdl.env, values);
    assert.deepEqual(load(toYaml(fromKdl.raw, PROPERTY_TABLE), 'yaml').env, values);
  });

  // The environment cannot hold a NUL (the validator refuses one there): a rewrite's replacement
  // carries it.
  it('round-trips a NUL through KDL and back to YAML', () => {
    const yaml = 'global:\n  rewriteMap:\n    - regex: "^/a"\n      replacement: "/a\\u0000b"\n';
    const read = (text: string, syntax: Syntax) => {
      const result = loadConfigText(text, syntax, `t.${syntax}`, {
        properties: PROPERTY_TABLE,
        env: {},
      });
      assert.equal(result.config?.global.rewriteMap?.[0]?.replacement, '/a\0b');
      return result.raw!;
    };
    const kdl = toKdl(read(yaml, 'yaml'), PROPERTY_TABLE);
    assert.match(kdl, /replacement="\/a\\u\{0\}b"/);
    read(toYaml(read(kdl, 'kdl'), PROPERTY_TABLE), 'yaml');
  });

  it('escapes with \\u{…} and leaves other characters alone', () => {
    assert.equal(kdlString('x\u202ey\u2028z'), '"x\\u{202e}y\\u{2028}z"');
    assert.equal(kdlString('café 𝄞 "q" \\'), '"café 𝄞 \\"q\\" \\\\"');
  });

  it('gives KDL that its reader takes back, through the command line', async () => {
    writeFileSync(
      join(dir, 'bidi.yaml'),
      'global:\n  environmentVariables:\n    NOTE: "admin\\u202e@example.com\\u2028two\\ufeff"\n',
    );
    const converted = await runCli(['convert', 'bidi.yaml'], { cwd: dir });
    assert.equal(converted.stderr, '');
    assert.equal(
      converted.stdout,
      'global {\n    environmentVariables {\n        NOTE "admin\\u{202e}@example.com\\u{2028}two\\u{feff}"\n    }\n}\n',
    );
    writeFileSync(join(dir, 'bidi.kdl'), converted.stdout);
    const back = await runCli(['convert', 'bidi.kdl'], { cwd: dir });
    assert.equal(back.stderr, '');
    assert.equal(back.code, 0);
    assert.deepEqual(load(back.stdout, 'yaml').env, {
      NOTE: 'admin\u202e@example.com\u2028two\ufeff',
    });
  });
});
