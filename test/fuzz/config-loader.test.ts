// Fuzzing the configuration loader: YAML and KDL texts made from the property table, with values of
// the wrong type, numbers out of range, unknown keys, deep nesting and odd Unicode, then cut, spliced
// and broken as text. loadConfig, loadConfigText and `portico validate` must never throw; each
// result is either a configuration without errors or error diagnostics, every one at a position
// inside the file; and a valid configuration converts to the other syntax without throwing.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { validateCommand } from '../../src/cli/validate.js';
import type { CommandIo } from '../../src/cli/io.js';
import { toKdl, toYaml } from '../../src/config/convert.js';
import type { Diagnostic } from '../../src/config/diagnostics.js';
import { loadConfig, loadConfigText, type LoadResult, type Syntax } from '../../src/config/load.js';
import type { PropertyRow, Scope } from '../../src/config/properties.js';
import { PROPERTY_TABLE } from '../../src/modules/registry.js';
import type { Spec, StringFormat } from '../../src/config/types.js';
import { weighted } from './arbitraries.js';
import { FUZZ_MS, fuzz, testTimeout } from './budget.js';

/** Strings no well-behaved file holds: controls, direction marks, BOMs, astral and combining. */
const oddUnicode = fc.constantFrom(
  '\0',
  '\u202e',
  '\ufeff',
  '\u2028',
  '𝄞',
  'e\u0301',
  '\ud800',
  '\x7f',
  '\t',
  '\r',
  'ǅ',
  '{{env.HOME}}',
  '{{env.PORTICO_FUZZ_UNSET}}',
  '{{ env.A }}',
  '{{env.}}',
  '"',
  "'",
  '\\',
  '#',
  '- ',
  ': ',
);
const oddString = fc
  .array(fc.oneof(fc.string({ maxLength: 6 }), oddUnicode), { maxLength: 4 })
  .map((p) => p.join(''));

/** A few strings of each format that pass its check, and some that nearly do. */
const FORMAT_SAMPLES: Record<StringFormat, readonly string[]> = {
  'http-url': [
    'http://127.0.0.1:3000',
    'https://example.com/base',
    'http://[::1]:1/',
    'http://',
    'ftp://x',
  ],
  'backend-url': [
    'http://127.0.0.1:3000',
    'h2c://127.0.0.1:50051',
    'unix:/run/app.sock',
    'http+unix://%2Frun%2Fapp.sock/base',
    'http://unix:/run/app.sock:/base',
    'unix:run/app.sock',
    'unix://host/x',
    'grpc://x',
    'http+unix://%zz',
  ],
  'gateway-url': ['tcp://127.0.0.1:4000/', 'unix:///run/x.sock', 'tcp://x', 'unix://'],
  email: ['a@example.com', 'a@', '@b'],
  regex: ['^/old/(.*)', '(a|b)+', '(', '[z-a]', '(?<n>x)', '\\p{L}+', '(?<=a)b', 'a{99999}'],
  ip: ['127.0.0.1', '::1', 'localhost', '999.1.1.1', '1.2.3'],
  'ip-or-cidr': ['10.0.0.0/8', '2001:db8::/32', '10.0.0.0/33', '::/0'],
  domain: ['example.com', '*.example.com', '*', 'a..b', '-x.com', 'xn--nxasmq6b.com'],
  listen: ['80', '127.0.0.1:8080', '[::1]:443', '0', '65536', ':80', 'host:'],
  listener: [
    '80',
    '[::]:80',
    'unix:/run/p.sock',
    'unix:relative',
    'unix:',
    `unix:/${'x'.repeat(120)}`,
  ],
  'file-mode': ['0660', '600', '0999', '66', ''],
  'header-name': ['X-Foo', 'Content-Length', 'bad name', ''],
  'header-value': ['bar', 'a\nb', ''],
  'http-method': ['GET', 'PROPFIND', 'get', 'G T', ''],
  'url-path': ['/api', '/', 'api', '//x', '/%00'],
  'file-extension': ['.php', 'php', '.'],
  'file-name': ['index.html', 'a/b', '..', ''],
  'media-type': ['text/html; charset=utf-8', 'application/wasm', 'text', 'a/b; c'],
  module: ['rproxy', 'cache', 'nope'],
  'cipher-suite': ['TLS_AES_128_GCM_SHA256', 'ECDHE-RSA-AES128-GCM-SHA256', 'NOPE'],
  'ecdh-curve': ['x25519', 'secp256r1', 'nope'],
  'env-name': ['FOO', '1X', 'A=B'],
  'env-value': ['bar', 'a\0b'],
  path: ['www', '/tmp/portico-fuzz-none', '../x', 'cert.pem', ''],
  command: ['python3', '/usr/bin/env', ''],
  'rate-limit-key': ['clientIP', 'uri', 'header:X-Api-Key', 'header:', 'header:a b', 'clientip'],
};

type Plain = null | boolean | number | bigint | string | Plain[] | { [key: string]: Plain };

/** Any value, for where a property wants another type. */
const wrongValue: fc.Arbitrary<Plain> = fc.oneof(
  fc.constantFrom<Plain>(null, true, false, 0, -1, 1.5, 1e300, 'yes', 'off', '', []),
  fc.constant<Plain>({ unknown: 1 }),
  oddString,
  fc.array(fc.oneof(fc.integer(), oddString), { maxLength: 3 }),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }),
);

/** An object of these entries, `__proto__` among them as an own key. */
const objectOf = (entries: [string, Plain][]): { [key: string]: Plain } =>
  Object.fromEntries(entries);

/** A value for `spec`: usually one that fits, sometimes out of range, of another type or odd. */
function valueFor(spec: Spec, depth: number): fc.Arbitrary<Plain> {
  return weighted([8, fitting(spec, depth)], [1, wrongValue]);
}

function fitting(spec: Spec, depth: number): fc.Arbitrary<Plain> {
  switch (spec.kind) {
    case 'bool':
      return fc.boolean();
    case 'int':
      return weighted<Plain>(
        [6, fc.integer({ min: spec.min, max: Math.min(spec.max, Number.MAX_SAFE_INTEGER) })],
        [
          2,
          fc.constantFrom<Plain>(
            spec.min - 1,
            spec.max + 1,
            2 ** 53,
            2 ** 64,
            -0,
            0.5,
            String(spec.min),
            BigInt(spec.max) + 1n,
          ),
        ],
      );
    case 'string': {
      const samples = spec.format ? FORMAT_SAMPLES[spec.format] : ['value', ''];
      return weighted<Plain>([6, fc.constantFrom(...samples)], [1, oddString]);
    }
    case 'enum':
      return weighted<Plain>(
        [6, fc.constantFrom(...spec.values)],
        [1, fc.string({ maxLength: 8 })],
      );
    case 'list': {
      const items = fc.array(valueFor(spec.of, depth + 1), { maxLength: depth > 2 ? 1 : 3 });
      return spec.single ? fc.oneof(items, valueFor(spec.of, depth + 1)) : items;
    }
    case 'map':
      return fc.dictionary(
        weighted(
          [
            4,
            spec.keyFormat
              ? fc.constantFrom(...FORMAT_SAMPLES[spec.keyFormat])
              : fc.string({ maxLength: 8 }),
          ],
          [1, oddString],
        ),
        valueFor(spec.values, depth + 1),
        { maxKeys: 3 },
      );
    case 'object':
      return fc
        .tuple(
          fc.subarray(Object.entries(spec.fields)),
          fc.option(fc.tuple(fc.string({ maxLength: 8 }), wrongValue), { freq: 4 }),
        )
        .chain(([fields, unknown]) =>
          fc
            .tuple(...fields.map(([, f]) => valueFor(f.spec, depth + 1)))
            .map((values) =>
              objectOf([
                ...fields.map(([name], i): [string, Plain] => [name, values[i]!]),
                ...(unknown ? [unknown] : []),
              ]),
            ),
        );
    case 'nullable':
      return fc.oneof(fc.constant(null), fitting(spec.of, depth));
    case 'union':
      return fc.oneof(...spec.options.map((o) => fitting(o, depth)));
    case 'section':
      return depth > 1
        ? fc.constant([])
        : fc.array(scopeMap(spec.scope, depth + 1), { maxLength: 2 });
  }
}

const ROWS = PROPERTY_TABLE.names.map((name): [string, PropertyRow] => [
  name,
  PROPERTY_TABLE.row(name)!,
]);
const UNKNOWN_KEYS = ['prot', 'wwwRoot', 'Port', '', 'hosts', 'global', '__proto__', 'constructor'];

/** A scope's properties: a few of those the table allows there, now and then one it does not. */
function scopeMap(scope: Scope, depth: number): fc.Arbitrary<{ [key: string]: Plain }> {
  const here = ROWS.filter(([, r]) => r.scopes.includes(scope));
  const elsewhere = ROWS.filter(([, r]) => !r.scopes.includes(scope));
  return fc
    .tuple(
      fc.uniqueArray(fc.constantFrom(...here), { maxLength: 5, selector: ([name]) => name }),
      fc.option(fc.constantFrom(...elsewhere), { freq: 6 }),
      fc.option(fc.tuple(fc.constantFrom(...UNKNOWN_KEYS), wrongValue), { freq: 6 }),
    )
    .chain(([rows, misplaced, unknown]) =>
      fc
        .tuple(
          ...[...rows, ...(misplaced ? [misplaced] : [])].map(([, r]) => valueFor(r.type, depth)),
        )
        .map((values) =>
          objectOf([
            ...[...rows, ...(misplaced ? [misplaced] : [])].map(([name], i): [string, Plain] => [
              name,
              values[i]!,
            ]),
            ...(unknown ? [unknown] : []),
          ]),
        ),
    );
}

const includeValue = fc.constantFrom<Plain>(
  'sub/*.yaml',
  'missing.yaml',
  'self.yaml',
  ['sub/*.kdl', 'sub/*.yaml'],
  '{{env.PORTICO_FUZZ_UNSET}}.yaml',
  'sub/[',
  '',
  7,
);

const document: fc.Arbitrary<{ [key: string]: Plain }> = fc
  .record(
    {
      global: weighted([6, scopeMap('global', 0)], [1, wrongValue]),
      hosts: weighted<Plain>([6, fc.array(scopeMap('host', 0), { maxLength: 3 })], [1, wrongValue]),
      include: includeValue,
    },
    { requiredKeys: [] },
  )
  .map((d) => d as { [key: string]: Plain });

/** A string as KDL writes it: quoted, with escapes for what cannot stand as itself. */
function kdlString(text: string): string {
  return `"${text.replace(/[\\"\n\r\t\0-\x1f\x7f]/g, (c) => `\\u{${c.charCodeAt(0).toString(16)}}`)}"`;
}

const kdlName = (name: string) => (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(name) ? name : kdlString(name));

function kdlScalar(value: Plain, v2: boolean): string {
  if (typeof value === 'string') return kdlString(value);
  if (value === null) return v2 ? '#null' : 'null';
  if (typeof value === 'boolean') return v2 ? `#${value}` : String(value);
  if (typeof value === 'number' && !Number.isFinite(value)) return v2 ? '#inf' : '1e999';
  return String(value);
}

const isObject = (v: Plain): v is { [key: string]: Plain } =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * A generated tree in KDL, as CONTRACT.md maps YAML to it: scalars and lists of scalars as
 * arguments, mappings as children, lists of mappings as repeated nodes with properties, a host's
 * locations and errorConfig as blocks. Whatever fits none of that is written all the same.
 */
function toKdlText(doc: { [key: string]: Plain }, v2: boolean): string {
  const lines: string[] = [];
  const node = (name: string, value: Plain, pad: string): void => {
    if (isObject(value)) {
      lines.push(`${pad}${kdlName(name)} {`);
      for (const [k, v] of Object.entries(value)) child(k, v, `${pad}    `);
      lines.push(`${pad}}`);
    } else if (Array.isArray(value) && value.some(isObject)) {
      for (const item of value) {
        if (!isObject(item)) lines.push(`${pad}${kdlName(name)} ${kdlScalar(item as Plain, v2)}`);
        else {
          const props = Object.entries(item).filter(([, v]) => !isObject(v) && !Array.isArray(v));
          const rest = Object.entries(item).filter(([, v]) => isObject(v) || Array.isArray(v));
          lines.push(
            `${pad}${kdlName(name)}${props.map(([k, v]) => ` ${kdlName(k)}=${kdlScalar(v, v2)}`).join('')}${rest.length ? ' {' : ''}`,
          );
          if (rest.length) {
            for (const [k, v] of rest) child(k, v, `${pad}    `);
            lines.push(`${pad}}`);
          }
        }
      }
    } else if (Array.isArray(value)) {
      lines.push(`${pad}${kdlName(name)}${value.map((v) => ` ${kdlScalar(v, v2)}`).join('')}`);
    } else lines.push(`${pad}${kdlName(name)} ${kdlScalar(value, v2)}`);
  };
  const child = (name: string, value: Plain, pad: string): void => {
    if ((name === 'locations' || name === 'errorConfig') && Array.isArray(value)) {
      for (const item of value) {
        if (!isObject(item)) continue;
        const { path, scode, ...rest } = item;
        const head =
          name === 'locations'
            ? `location ${kdlScalar(path ?? '/', v2)}`
            : `errorConfig${scode === undefined ? '' : ` scode=${kdlScalar(scode, v2)}`}`;
        lines.push(`${pad}${head} {`);
        for (const [k, v] of Object.entries(rest)) child(k, v, `${pad}    `);
        lines.push(`${pad}}`);
      }
    } else node(name, value, pad);
  };
  if (v2) lines.push('/- kdl-version 2');
  for (const [key, value] of Object.entries(doc)) {
    if (key === 'hosts' && Array.isArray(value)) {
      for (const host of value) {
        if (!isObject(host)) continue;
        const { domain, ip, ...rest } = host;
        const selectors = [
          ...(domain === undefined ? [] : [` domain=${kdlScalar(domain, v2)}`]),
          ...(ip === undefined ? [] : [` ip=${kdlScalar(ip, v2)}`]),
        ].join('');
        lines.push(`host${selectors} {`);
        for (const [k, v] of Object.entries(rest)) child(k, v, '    ');
        lines.push('}');
      }
    } else node(key, value, '');
  }
  return `${lines.join('\n')}\n`;
}

/** Changes to the text as text: cut short, a character put in or taken out, a line doubled. */
type Edit = ['cut' | 'insert' | 'delete' | 'double', number, string];
const edit: fc.Arbitrary<Edit> = fc.tuple(
  fc.constantFrom('cut', 'insert', 'delete', 'double'),
  fc.nat(),
  weighted(
    [
      3,
      fc.constantFrom(
        '{',
        '}',
        '[',
        ']',
        ':',
        '-',
        '"',
        "'",
        '\n',
        '\t',
        ' ',
        '#',
        '&a',
        '*a',
        '!!binary',
        '/-',
        '\\',
        ';',
        '=',
      ),
    ],
    [1, oddUnicode],
  ),
) as fc.Arbitrary<Edit>;

function applyEdit(text: string, [kind, at, piece]: Edit): string {
  const i = at % (text.length + 1);
  switch (kind) {
    case 'cut':
      return text.slice(0, i);
    case 'insert':
      return text.slice(0, i) + piece + text.slice(i);
    case 'delete':
      return text.slice(0, i) + text.slice(i + 1);
    case 'double': {
      const lines = text.split('\n');
      const n = at % lines.length;
      return [...lines.slice(0, n + 1), ...lines.slice(n)].join('\n');
    }
  }
}

/** Texts no generator of trees makes: nesting thousands deep, alias chains, KDL's corners. */
const handmade = (syntax: Syntax) =>
  fc
    .nat({ max: 20_000 })
    .chain((n) =>
      syntax === 'yaml'
        ? fc.constantFrom(
            `global:\n  blocklist: ${'['.repeat(n)}${']'.repeat(n)}\n`,
            `global:\n  customHeaders: ${'{a: '.repeat(n)}1${'}'.repeat(n)}\n`,
            `global:\n${Array.from({ length: Math.min(n, 500) }, (_, i) => `${'  '.repeat(i + 1)}a${i}:`).join('\n')}\n`,
            `a: &a [x]\nb: &b [*a, *a]\nglobal:\n  blocklist: ${'[*b, '.repeat(Math.min(n, 200))}1${']'.repeat(Math.min(n, 200))}\n`,
            `global: !!map\n  port: !!str 80\n  secure: !!bool "true"\n`,
            `%YAML 1.1\n---\nglobal:\n  secure: yes\n  port: 0o777\n`,
            `global:\n  port: ${'9'.repeat(Math.min(n, 400))}\n`,
            `? [a, b]\n: c\nglobal: {}\n`,
            `global: {port: 80, port: 81}\n`,
          )
        : fc.constantFrom(
            `global {\n${'a {\n'.repeat(n)}${'}\n'.repeat(n)}}\n`,
            `global { port ${'9'.repeat(Math.min(n, 400))} }\n`,
            `global { port (u8)80; secure #true; wwwroot r#"a"b"# }\n`,
            `/-global { port 1 }\nhost domain="a" { /- wwwroot "x"; wwwroot """\n  multi\n  """ }\n`,
            `global { wwwroot "\\u{10FFFF}\\u{D800}" }\n`,
            `global { port 0x50; sport 0b1; timeout 1e3; shutdownTimeout -0 }\n`,
            `host domain="a" ip="1.2.3.4" domain="b" {}\n`,
            `global { customHeaders { "X-A" "1"; "X-A" "2" } }\n`,
            `host domain="a" { location "/a" { location "/b" {} } errorConfig 404 {} }\n`,
          ),
    );

/** A configuration text in `syntax`: from a generated tree, edited or not, or a handmade one. */
const configText = (syntax: Syntax): fc.Arbitrary<string> =>
  weighted(
    [
      6,
      fc.tuple(document, fc.boolean(), fc.array(edit, { maxLength: 2 })).map(([doc, v2, edits]) => {
        const text = syntax === 'yaml' ? stringify(doc, { lineWidth: 0 }) : toKdlText(doc, v2);
        return edits.reduce(applyEdit, text);
      }),
    ],
    [1, handmade(syntax)],
  );

const dir = mkdtempSync(join(tmpdir(), 'portico-fuzz-config-'));
mkdirSync(join(dir, 'sub'));
writeFileSync(
  join(dir, 'sub', 'a.yaml'),
  'global:\n  port: 8081\nhosts:\n  - domain: sub.example\n',
);
writeFileSync(join(dir, 'sub', 'b.kdl'), 'host domain="kdl.example" {\n  wwwroot "www"\n}\n');
after(() => rmSync(dir, { recursive: true, force: true }));

/** The loader's promise about any result, `lines` being the main file's line count. */
function checkResult(result: LoadResult, file: string, lines: number): void {
  const errors = result.diagnostics.filter((d) => d.severity === 'error');
  assert.equal(
    result.config !== undefined,
    errors.length === 0,
    `a configuration ${result.config ? 'with' : 'without'} errors: ${JSON.stringify(errors)}`,
  );
  for (const d of result.diagnostics) checkDiagnostic(d, file, lines);
}

function checkDiagnostic(d: Diagnostic, file: string, lines: number): void {
  const { pos } = d;
  assert.ok(typeof d.message === 'string' && d.message.length > 0, JSON.stringify(d));
  assert.ok(typeof pos.file === 'string' && pos.file.length > 0, JSON.stringify(d));
  assert.ok(Number.isInteger(pos.line) && pos.line >= 1, JSON.stringify(d));
  assert.ok(Number.isInteger(pos.col) && pos.col >= 1, JSON.stringify(d));
  if (pos.file === file)
    assert.ok(pos.line <= lines + 1, `line past the file's end: ${JSON.stringify(d)}`);
}

/** A sink for a command's output. */
function sink(): { stream: Writable; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, text: () => text };
}

let serial = 0;

/** Checks one text every way it can be loaded; resolves whether it is a valid configuration. */
async function checkText(text: string, syntax: Syntax): Promise<boolean> {
  const name = `fuzz-${serial++}.${syntax}`;
  const file = join(dir, name);
  writeFileSync(file, text);
  writeFileSync(join(dir, `self.${syntax}`), text);
  // KDL counts CR, NEL, FF, VT and the Unicode separators as line ends too.
  const lines = text.split(/\r\n|[\n\r\x0b\x0c\x85\u2028\u2029]/).length;
  const env = { HOME: '/home/fuzz', A: 'a' };
  try {
    const loaded = await loadConfig(name, { cwd: dir, env, properties: PROPERTY_TABLE });
    checkResult(loaded, name, lines);
    if (loaded.config && loaded.raw) {
      toKdl(loaded.raw, PROPERTY_TABLE);
      toYaml(loaded.raw, PROPERTY_TABLE);
    }
    checkResult(
      loadConfigText(text, syntax, name, { env, baseDir: dir, properties: PROPERTY_TABLE }),
      name,
      lines,
    );
    const out = sink();
    const err = sink();
    const io = { stdin: process.stdin, stdout: out.stream, stderr: err.stream } as CommandIo;
    const code = await validateCommand(file, io);
    assert.ok(code === 0 || code === 1, `validate exited ${code}`);
    assert.equal(code === 0, out.text().endsWith('configuration OK\n'), err.text());
    return loaded.config !== undefined;
  } finally {
    rmSync(file, { force: true });
  }
}

describe('fuzzing the configuration loader', { timeout: testTimeout() }, () => {
  for (const syntax of ['yaml', 'kdl'] as const) {
    it(`loads any ${syntax.toUpperCase()} text into a configuration or positioned errors (${FUZZ_MS / 2000} s)`, async (t) => {
      let valid = 0;
      await fuzz(
        t,
        fc.asyncProperty(configText(syntax), async (text) => {
          if (await checkText(text, syntax)) valid++;
        }),
        0.5,
      );
      t.diagnostic(`${valid} texts were valid configurations`);
    });
  }
});
