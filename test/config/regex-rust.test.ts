// Rust (fancy-regex) patterns, as Ferron configurations are written, keep their meaning in
// JavaScript; what cannot is refused by name.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatDiagnostic } from '../../src/config/diagnostics.js';
import { loadConfigText } from '../../src/config/load.js';
import { compileRegex, RegexSyntaxError } from '../../src/config/regex.js';
import { PROPERTY_TABLE } from '../../src/modules/registry.js';

function matches(pattern: string, yes: readonly string[], no: readonly string[]): void {
  const re = compileRegex(pattern);
  for (const s of yes)
    assert.ok(re.test(s), `${pattern} should match ${JSON.stringify(s)} (${re})`);
  for (const s of no)
    assert.ok(!re.test(s), `${pattern} should not match ${JSON.stringify(s)} (${re})`);
}

describe('Rust regex syntax', () => {
  it('translates the anchors \\A, \\z and \\Z', () => {
    matches('^/a\\z', ['/a'], ['/a\n', '/az']);
    matches('\\A/a', ['/a', '/ab'], ['x/a', 'x\n/a']);
    matches('(?m)\\A/a', ['/a'], ['x\n/a']);
    matches('^/ab\\Z', ['/ab', '/ab\n\n'], ['/abc', '/ab\nx']);
  });

  it('translates POSIX classes, nested classes and set operations', () => {
    matches('^/[[:digit:]]+$', ['/123'], ['/12a', '/']);
    matches('^/[[:^digit:]x]+$', ['/abx'], ['/1']);
    matches('^/[[:alpha:][:digit:]]+$', ['/a1'], ['/-']);
    matches('^/[[:foo:]]$', ['/f', '/:'], ['/x']);
    matches('^[a-z&&[^aeiou]]+$', ['bcd'], ['bad']);
    matches('^[0-9--4]+$', ['123'], ['4']);
    matches('^[a-c~~b-d]+$', ['ad'], ['b', 'c']);
    matches('^[]a]+$', [']a'], ['b']);
    matches('^[^]a]$', ['b'], [']', 'a']);
    matches('^[-a]+$', ['-a'], ['b']);
    matches('^\\h+$', ['0aF'], ['g']);
  });

  it('reads \\p, \\d, \\w, \\s and \\b as Unicode classes, as Rust does', () => {
    matches('^/\\pL+$', ['/abc', '/héllo'], ['/a1']);
    matches('^/\\p{Greek}+$', ['/αβ'], ['/ab']);
    matches('^/\\p{greek}$', ['/α'], ['/a']);
    matches('^/\\p{sc=Greek}$', ['/α'], ['/a']);
    matches('^/\\p{Uppercase Letter}$', ['/A'], ['/a']);
    matches('^/\\P{L}$', ['/1'], ['/a']);
    matches('^\\d+$', ['123', '١٢٣'], ['12a']);
    matches('^\\w+$', ['héllo_1'], ['a-b']);
    matches('\\bfoo\\b', ['a foo b', 'foo'], ['afoo', 'fooé']);
    matches('^/\\b{start}a', ['/a'], []);
  });

  it('keeps what `.`, (?s), (?m) and (?U) mean in Rust', () => {
    matches('^.$', ['\r', 'a', '☃'], ['\n']);
    matches('(?s)^.$', ['\n'], []);
    matches('(?m)^b$', ['a\nb\nc'], ['ab', 'a\rb']);
    assert.equal(compileRegex('(?U)^/a.*b').exec('/axbxb')?.[0], '/axb');
    assert.equal(compileRegex('(?U)^/a.*?b').exec('/axbxb')?.[0], '/axbxb');
  });

  it('scopes case-insensitivity as fancy-regex does', () => {
    matches('^/A(?i:dmin)$', ['/Admin', '/ADMIN', '/AdMiN'], ['/admin']);
    matches('(?i)^/admin$', ['/ADMIN', '/admin'], ['/x']);
    matches('^/a(?i)b$', ['/aB', '/ab'], ['/AB']);
    matches('^/(a(?i)b)c$', ['/abC', '/aBc'], ['/Abc']);
    matches('^/(?:a(?i)b)c$', ['/aBc'], ['/aBC']);
    matches('^/x(?i:k)$', ['/xK', '/xk', '/x\u212a'], ['/Xk']);
    matches('^/x(?i:[a-c])$', ['/xB', '/xb'], ['/Xb', '/xd']);
    matches('^/x(?i:[^a])$', ['/xb'], ['/xa', '/xA']);
    matches('^/é(?i:b)$', ['/éB'], ['/ÉB']);
  });

  it('translates escapes, repetitions, comments, names and backreferences', () => {
    matches('^\\x41\\x{42}\\u0043\\U00000044\\e$', ['ABCD\x1b'], []);
    matches('^/a\\-b\\#c\\&d\\~e$', ['/a-b#c&d~e'], []);
    matches('^/a{,2}$', ['/', '/aa'], ['/aaa']);
    matches('^/a{$', ['/a{'], []);
    matches('^/(?#a comment)a$', ['/a'], []);
    matches('^(a)\\1$', ['aa'], ['ab']);
    matches('^(?<n>a)\\k<n>(?P=n)$', ['aaa'], ['aab']);
    assert.equal(compileRegex('^/(?P<slug>[a-z]+)$').exec('/hello')?.groups?.slug, 'hello');
  });

  it('refuses, by name, what JavaScript cannot mean the same way', () => {
    const refused: [string, RegExp][] = [
      ['(?>a)', /atomic groups/],
      ['a*+', /possessive repetition/],
      ['\\K', /"\\K"/],
      ['\\G', /"\\G"/],
      ['(?(1)a|b)', /conditionals/],
      ['\\g<1>', /subroutine calls/],
      ['(?x)a', /the x flag/],
      ['(?-u)a', /\(\?-u\)/],
      ['(a)?\\1', /backreference to group 1 is not certain/],
      ['(a)|\\1', /backreference to group 1 is not certain/],
      ['\\0', /"\\0" is not supported/],
      ['\\q', /"\\q" is not a valid escape/],
      ['(?i:é)x', /"é" in a case-insensitive part cannot be translated/],
      ['(?i:\\p{Lu})x', /Unicode property in a case-insensitive part/],
      ['\\p{NoSuchThing}', /Unicode property "NoSuchThing" is unknown/],
      ['(?<1a>x)', /group name "1a" is not supported/],
      ['\\x{110000}', /not a Unicode scalar value/],
    ];
    for (const [pattern, message] of refused)
      assert.throws(
        () => compileRegex(pattern),
        (e) => e instanceof RegexSyntaxError && message.test(e.message),
        pattern,
      );
  });

  it('reports a refused pattern as a configuration error at its line', () => {
    const result = loadConfigText(
      'global:\n  rewriteMap:\n    - regex: "^/(?>a|b)"\n      replacement: /x\n',
      'yaml',
      'portico.yaml',
      { properties: PROPERTY_TABLE },
    );
    assert.deepEqual(result.diagnostics.map(formatDiagnostic), [
      'portico.yaml:3:14: global.rewriteMap[0].regex: invalid regular expression "^/(?>a|b)": atomic groups "(?>…)" are not supported (at character 3)',
    ]);
  });
});
