// The order a response head is finished in: removeHeaders, then setHeaders, then customHeaders
// where the name is still absent, then `Server` unless one of them dealt with it; `{path}` filled
// in.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import {
  applyHeaderRules,
  headerList,
  headerRules,
  NO_RULES,
} from '../../src/http/header-rules.js';

const finished = (
  headers: string[],
  rules: Parameters<typeof applyHeaderRules>[1],
  path = '/p',
): string[] => {
  const list = headers.slice();
  applyHeaderRules(list, rules, path);
  return list;
};

it('drops any Server the response had and adds Portico’s when nothing is configured', () => {
  assert.deepEqual(finished(['Server', 'nginx', 'X-A', '1'], NO_RULES), [
    'X-A',
    '1',
    'Server',
    'Portico',
  ]);
});

it('removes, then sets (replacing every field of the name), then adds custom headers only where absent', () => {
  const rules = headerRules(
    ['x-powered-by', 'X-Debug'],
    headerList({ 'cache-control': 'no-store', 'X-Where': '{path}' }),
    headerList({ 'Cache-Control': 'public', 'X-Debug': 'custom', 'X-Keep': 'custom' }),
  );
  const out = finished(
    [
      'X-Powered-By',
      'PHP/8',
      'Cache-Control',
      'private',
      'Cache-Control',
      'max-age=0',
      'X-Debug',
      'yes',
      'X-Keep',
      'backend',
    ],
    rules,
    '/a%20b',
  );
  assert.deepEqual(out, [
    'X-Keep',
    'backend',
    'cache-control',
    'no-store',
    'X-Where',
    '/a%20b',
    // Removed from the response, then added back by customHeaders: it was absent by then.
    'X-Debug',
    'custom',
    'Server',
    'Portico',
  ]);
  assert.equal(rules.hasPath, true);
});

it('Server: removed, it goes out with none; set or custom, theirs; set wins over custom', () => {
  assert.deepEqual(finished(['Server', 'x'], headerRules(['Server'], [], [])), []);
  assert.deepEqual(finished([], headerRules(['server'], [], headerList({ Server: 'mine' }))), [
    'Server',
    'mine',
  ]);
  assert.deepEqual(
    finished([], headerRules([], headerList({ server: 'set' }), headerList({ Server: 'custom' }))),
    ['server', 'set'],
  );
});

it('a {path} that would make a value invalid skips that header', () => {
  const rules = headerRules([], headerList({ 'X-Where': '{path}' }), []);
  assert.deepEqual(finished(['X-Where', 'old'], rules, '/\u2603'), [
    'X-Where',
    'old',
    'Server',
    'Portico',
  ]);
});

it('one entry per name, the later spelling winning (a location extending its host’s mapping)', () => {
  assert.deepEqual(
    headerList({ 'X-A': 'host', 'X-B': 'host', 'x-a': 'location' }).map((h) => [h.name, h.value]),
    [
      ['X-B', 'host'],
      ['x-a', 'location'],
    ],
  );
});
