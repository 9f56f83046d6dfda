// Cache-Control parsing (RFC 9111 §5.2) and the freshness arithmetic (§4.2) on their own.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCacheControl } from '../../../src/modules/cache/cache-control.js';
import {
  currentAge,
  freshnessLifetime,
  initialAge,
  reuse,
  staleIfError,
} from '../../../src/modules/cache/freshness.js';

describe('Cache-Control', () => {
  it('reads names case-insensitively, arguments as tokens or quoted strings with commas', () => {
    const d = parseCacheControl('Max-Age=60, no-cache="Set-Cookie, X-Id", PUBLIC');
    assert.equal(d.seconds('max-age'), 60);
    assert.ok(d.has('public'));
    assert.deepEqual(d.fields('no-cache'), ['set-cookie', 'x-id']);
  });

  it('joins several field lines; a directive repeated with another value counts as zero (§4.2.1)', () => {
    assert.equal(parseCacheControl(['max-age=60', 'max-age=60']).seconds('max-age'), 60);
    assert.equal(parseCacheControl(['max-age=60', 'max-age=5']).seconds('max-age'), 0);
    assert.equal(parseCacheControl('max-age=abc').seconds('max-age'), 0);
    assert.equal(parseCacheControl('max-age="30"').seconds('max-age'), 30);
    assert.equal(parseCacheControl('max-age=99999999999').seconds('max-age'), 2 ** 31);
    assert.equal(parseCacheControl(undefined).seconds('max-age'), undefined);
  });
});

describe('freshness', () => {
  const at = 1_700_000_000_000;
  const arrival = (headers: string[], status = 200) => ({
    status,
    headers,
    directives: parseCacheControl(headers[headers.indexOf('Cache-Control') + 1]),
    requestTime: at - 2000,
    responseTime: at,
  });
  const date = (ms: number) => new Date(ms).toUTCString();

  it('§4.2.1: s-maxage, then max-age, then Expires − Date; §4.2.2 heuristic only as allowed', () => {
    assert.equal(freshnessLifetime(arrival(['Cache-Control', 's-maxage=5, max-age=9'])), 5);
    assert.equal(
      freshnessLifetime(
        arrival(['Date', date(at), 'Expires', date(at + 90_000), 'Cache-Control', '']),
      ),
      90,
    );
    const lm = ['Date', date(at), 'Last-Modified', date(at - 1000_000), 'Cache-Control', ''];
    assert.equal(freshnessLifetime(arrival(lm)), 100);
    assert.equal(freshnessLifetime(arrival(lm, 302)), 0, '302 is not heuristically cacheable');
    const old = ['Date', date(at), 'Last-Modified', date(at - 1e10), 'Cache-Control', ''];
    assert.equal(freshnessLifetime(arrival(old)), 300, 'capped');
  });

  it('§4.2.3: the initial age is the larger of the apparent age and Age plus the response delay', () => {
    assert.equal(initialAge(arrival(['Date', date(at - 10_000), 'Cache-Control', ''])), 10);
    assert.equal(initialAge(arrival(['Date', date(at), 'Age', '7', 'Cache-Control', ''])), 9);
    const judged = {
      lifetime: 60,
      initialAge: 9,
      responseTime: at,
      directives: parseCacheControl(''),
    };
    assert.equal(currentAge(judged, at + 5000), 14);
  });

  it('§4.2.4, §5.2.1, RFC 5861: what a request may have of a stored response', () => {
    const request = (cc: string) => ({ directives: parseCacheControl(cc), pragmaNoCache: false });
    const entry = (cc: string, age: number) => ({
      lifetime: 60,
      initialAge: age,
      responseTime: at,
      directives: parseCacheControl(cc),
    });
    assert.equal(reuse(entry('', 10), request(''), at), 'fresh');
    assert.equal(reuse(entry('', 10), request('max-age=5'), at), 'validate-requested');
    assert.equal(reuse(entry('', 10), request('min-fresh=55'), at), 'validate-requested');
    assert.equal(reuse(entry('', 70), request(''), at), 'validate-stale');
    assert.equal(reuse(entry('', 70), request('max-stale'), at), 'stale-allowed');
    assert.equal(reuse(entry('', 70), request('max-stale=5'), at), 'validate-stale');
    assert.equal(reuse(entry('must-revalidate', 70), request('max-stale'), at), 'validate-stale');
    assert.equal(reuse(entry('s-maxage=60', 70), request('max-stale'), at), 'validate-stale');
    assert.equal(
      reuse(entry('stale-while-revalidate=20', 70), request(''), at),
      'stale-while-revalidate',
    );
    assert.equal(reuse(entry('stale-while-revalidate=5', 70), request(''), at), 'validate-stale');
    assert.equal(reuse(entry('no-cache', 0), request(''), at), 'validate-stale');
    assert.equal(
      reuse(entry('', 0), { directives: parseCacheControl(''), pragmaNoCache: true }, at),
      'validate-requested',
    );
    assert.equal(staleIfError(entry('stale-if-error=20', 70), request(''), at), true);
    assert.equal(staleIfError(entry('', 70), request('stale-if-error=20'), at), true);
    assert.equal(staleIfError(entry('stale-if-error=5', 70), request(''), at), false);
    assert.equal(
      staleIfError(entry('must-revalidate, stale-if-error=20', 70), request(''), at),
      false,
    );
  });
});
