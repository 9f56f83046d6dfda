// The conditional look-up without sockets: each condition, file order, a location's path beside its
// conditions, and the gate that joins the path patterns: whatever the patterns (backreferences,
// named groups, case-insensitive ones, lookbehind), the gated look-up answers as trying every
// location in turn does.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { Settings } from '../../src/config/properties.js';
import {
  ConditionalLocations,
  locationConditions,
  type LocationRequest,
} from '../../src/plan/location-conditions.js';
import { locationPrefix } from '../../src/plan/location-path.js';

interface TestRoute {
  readonly name: string;
  readonly prefix: string | undefined;
  readonly conditions: ReturnType<typeof locationConditions>;
}

const route = (name: string, settings: Settings & { path?: string }): TestRoute => ({
  name,
  prefix: settings.path === undefined ? undefined : locationPrefix(settings.path),
  conditions: locationConditions(settings),
});
const GET: LocationRequest = { method: 'GET', headers: {} };

describe('conditional locations', () => {
  it('a location without conditions has none', () => {
    assert.equal(locationConditions({ wwwroot: '/srv' }), undefined);
  });

  it('each condition, all of a location’s together, and its path at a segment boundary', () => {
    const table = new ConditionalLocations([
      route('post-api', { path: '/api', matchMethods: ['POST'] }),
      route('css', { pathRegex: '\\.css$' }),
      route('canary', { matchHeaders: { 'X-Canary': '^on$' }, matchQuery: { v: '^2$' } }),
    ]);
    const at = (path: string, request = GET, query = '') => table.match(path, request, query)?.name;
    assert.equal(at('/api/x', { method: 'POST', headers: {} }), 'post-api');
    assert.equal(at('/apix', { method: 'POST', headers: {} }), undefined);
    assert.equal(at('/api/x'), undefined);
    assert.equal(at('/a/b.css'), 'css');
    assert.equal(at('/a/b.css.map'), undefined);
    const canary: LocationRequest = { method: 'GET', headers: { 'x-canary': 'on' } };
    assert.equal(at('/', canary, '?v=2'), 'canary');
    assert.equal(at('/', canary, '?v=3&v=2'), 'canary', 'any value of a repeated parameter');
    assert.equal(at('/', canary, '?v=1'), undefined, 'both must hold');
    assert.equal(at('/', GET, '?v=2'), undefined);
    assert.equal(
      at('/', { method: 'GET', headers: { 'x-canary': ['off', 'on'] } }, '?v=2'),
      'canary',
    );
    // A header named like an Object property reads no value from the headers object.
    const proto = new ConditionalLocations([
      route('proto', { matchHeaders: { ['__proto__']: '.' } }),
    ]);
    assert.equal(proto.match('/', GET, ''), undefined);
  });

  it('the first in file order wins, whichever pattern is more specific', () => {
    const table = new ConditionalLocations([
      route('any-static', { pathRegex: '\\.(css|js|png)$' }),
      route('css', { pathRegex: '\\.css$' }),
      route('case-insensitive', { pathRegex: '(?i)\\.JPE?G$' }),
    ]);
    assert.equal(table.match('/a.css', GET, '')?.name, 'any-static');
    assert.equal(table.match('/a.jpeg', GET, '')?.name, 'case-insensitive');
    assert.equal(table.match('/a.JPG', GET, '')?.name, 'case-insensitive');
    assert.equal(table.match('/a.html', GET, '')?.name, undefined);
  });

  it('gated, it answers as trying each location in turn does', () => {
    const patterns = [
      '\\.css$',
      '^/a',
      '(?i)B$',
      '(a)\\1',
      '(?P<n>b)(?P=n)',
      '(?<=/)c',
      'a(?!b)',
      '^/(?i)x/',
      '[0-9]{2}',
      '^$',
      '\\bab\\b',
    ];
    const paths = fc.stringMatching(/^\/[abcxAB0-9./]{0,10}$/);
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            pattern: fc.constantFrom(...patterns),
            path: fc.option(fc.constantFrom('/', '/a', '/b'), { nil: undefined }),
          }),
          { minLength: 1, maxLength: 6 },
        ),
        fc.array(paths, { minLength: 1, maxLength: 10 }),
        (written, requests) => {
          const routes = written.map((w, i) =>
            route(`r${i}`, { pathRegex: w.pattern, ...(w.path ? { path: w.path } : {}) }),
          );
          const gated = new ConditionalLocations(routes);
          // One location alone is its own gate: trying them one by one in file order is the oracle.
          const alone = routes.map((r) => new ConditionalLocations([r]));
          for (const path of requests) {
            const expected = routes.find((_, i) => alone[i]!.match(path, GET, '') !== undefined);
            assert.equal(gated.match(path, GET, '')?.name, expected?.name, path);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
