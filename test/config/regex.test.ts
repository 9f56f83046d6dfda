// Rust-syntax patterns and replacement templates, as Ferron configurations write them.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { compileRegex, compileReplacement, RegexSyntaxError } from '../../src/config/regex.js';

it('translates leading inline flags and (?P<name>…)', () => {
  assert.ok(compileRegex('(?i)^/abc').test('/ABC'));
  assert.equal(compileRegex('^/(?P<slug>[a-z]+)$').exec('/hello')?.groups?.slug, 'hello');
  assert.throws(() => compileRegex('(?x)a'), RegexSyntaxError);
  assert.throws(() => compileRegex('(unclosed'), RegexSyntaxError);
});

it('fills $1, ${1}, $name, ${name} and $$ as Rust does', () => {
  const m = compileRegex('^/(?P<a>x+)/(y+)$').exec('/xx/yyy')!;
  const fill = (template: string) => compileReplacement(template)(m);
  assert.equal(fill('/$1/$2'), '/xx/yyy');
  assert.equal(fill('/${2}z'), '/yyyz');
  assert.equal(fill('/$a-${a}'), '/xx-xx');
  assert.equal(fill('$$1'), '$1');
  assert.equal(fill('/$1a'), '/', 'like Rust, $1a is the (missing) group "1a"');
  assert.equal(fill('/$9/$nope'), '//', 'missing groups are empty');
  assert.equal(fill('cost: $'), 'cost: $');
});
