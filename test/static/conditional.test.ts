import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { describe, it } from 'node:test';
import {
  entityTag,
  evaluatePreconditions,
  ifRangeHolds,
  tagListMatches,
  variantTag,
} from '../../src/static/conditional.js';

const MTIME = Date.UTC(2025, 0, 6, 14, 3, 7, 250);
const LAST_MODIFIED = new Date(MTIME).toUTCString();
const TAG = entityTag({ size: 1234, mtimeMs: MTIME, ino: 99 });

function evaluate(headers: IncomingHttpHeaders, method = 'GET') {
  return evaluatePreconditions(headers, method, TAG, MTIME);
}

describe('validators', () => {
  it('make a strong tag from size, mtime and inode, and variant tags from it', () => {
    assert.match(TAG, /^"[0-9a-f]+-[0-9a-f]+-[0-9a-f]+"$/);
    assert.notEqual(entityTag({ size: 1234, mtimeMs: MTIME + 0.001, ino: 99 }), TAG);
    assert.notEqual(entityTag({ size: 1234, mtimeMs: MTIME, ino: 100 }), TAG);
    assert.equal(variantTag(TAG, 'gzip'), `${TAG.slice(0, -1)}-gzip"`);
  });
});

describe('tagListMatches', () => {
  it('finds a tag in a list, weakly or strongly', () => {
    assert.equal(tagListMatches(`"x", ${TAG}`, TAG, { strong: true }), true);
    assert.equal(tagListMatches(`W/${TAG}`, TAG, { strong: false }), true);
    assert.equal(tagListMatches(`W/${TAG}`, TAG, { strong: true }), false);
    assert.equal(tagListMatches('"other"', TAG, { strong: false }), false);
    assert.equal(tagListMatches('*', TAG, { strong: true }), true);
    assert.equal(tagListMatches('*', undefined, { strong: true }), true);
    assert.equal(tagListMatches(TAG, undefined, { strong: false }), false);
  });

  it("matches a compressed variant's tag to its file", () => {
    for (const encoding of ['br', 'gzip', 'deflate'] as const)
      assert.equal(tagListMatches(variantTag(TAG, encoding), TAG, { strong: false }), true);
    assert.equal(tagListMatches(`${TAG.slice(0, -1)}-zstd"`, TAG, { strong: false }), false);
  });

  it('matches nothing in a malformed list', () => {
    assert.equal(tagListMatches(TAG.slice(1), TAG, { strong: false }), false);
    assert.equal(tagListMatches(`"x", ${TAG.slice(0, -1)}`, TAG, { strong: false }), false);
  });
});

describe('evaluatePreconditions (RFC 9110 §13.2.2)', () => {
  it('passes without conditions', () => assert.equal(evaluate({}), 'pass'));

  it('If-Match: 412 unless a strong match or *', () => {
    assert.equal(evaluate({ 'if-match': TAG }), 'pass');
    assert.equal(evaluate({ 'if-match': '*' }), 'pass');
    assert.equal(evaluate({ 'if-match': '"nope"' }), 'failed');
    assert.equal(evaluate({ 'if-match': `W/${TAG}` }), 'failed');
    // With ETags off there is no tag to match, only *.
    assert.equal(evaluatePreconditions({ 'if-match': TAG }, 'GET', undefined, MTIME), 'failed');
    assert.equal(evaluatePreconditions({ 'if-match': '*' }, 'GET', undefined, MTIME), 'pass');
  });

  it('If-Unmodified-Since: 412 when modified later; ignored under If-Match or when not a date', () => {
    assert.equal(evaluate({ 'if-unmodified-since': LAST_MODIFIED }), 'pass');
    assert.equal(
      evaluate({ 'if-unmodified-since': new Date(MTIME - 1000).toUTCString() }),
      'failed',
    );
    assert.equal(
      evaluate({ 'if-unmodified-since': new Date(MTIME - 1000).toUTCString(), 'if-match': TAG }),
      'pass',
    );
    assert.equal(evaluate({ 'if-unmodified-since': 'yesterday-ish' }), 'pass');
  });

  it('If-None-Match: 304 for GET and HEAD, 412 for other methods', () => {
    assert.equal(evaluate({ 'if-none-match': TAG }), 'not-modified');
    assert.equal(evaluate({ 'if-none-match': `"a", W/${TAG}` }, 'HEAD'), 'not-modified');
    assert.equal(evaluate({ 'if-none-match': '*' }), 'not-modified');
    assert.equal(evaluate({ 'if-none-match': TAG }, 'POST'), 'failed');
    assert.equal(evaluate({ 'if-none-match': '"other"' }), 'pass');
  });

  it('If-Modified-Since: 304 when not modified since, only for GET/HEAD and without If-None-Match', () => {
    assert.equal(evaluate({ 'if-modified-since': LAST_MODIFIED }), 'not-modified');
    assert.equal(
      evaluate({ 'if-modified-since': new Date(MTIME + 60_000).toUTCString() }),
      'not-modified',
    );
    assert.equal(evaluate({ 'if-modified-since': new Date(MTIME - 1000).toUTCString() }), 'pass');
    assert.equal(evaluate({ 'if-modified-since': LAST_MODIFIED }, 'POST'), 'pass');
    assert.equal(
      evaluate({ 'if-modified-since': LAST_MODIFIED, 'if-none-match': '"other"' }),
      'pass',
    );
    assert.equal(evaluate({ 'if-modified-since': 'not a date' }), 'pass');
  });

  it('If-Match failing wins over If-None-Match', () => {
    assert.equal(evaluate({ 'if-match': '"nope"', 'if-none-match': TAG }), 'failed');
  });
});

describe('ifRangeHolds', () => {
  it('needs a strong tag match or the exact Last-Modified date', () => {
    assert.equal(ifRangeHolds(TAG, TAG, MTIME), true);
    assert.equal(ifRangeHolds(variantTag(TAG, 'br'), TAG, MTIME), false);
    assert.equal(ifRangeHolds(`W/${TAG}`, TAG, MTIME), false);
    assert.equal(ifRangeHolds(TAG, undefined, MTIME), false);
    assert.equal(ifRangeHolds(LAST_MODIFIED, TAG, MTIME), true);
    assert.equal(ifRangeHolds(new Date(MTIME + 1000).toUTCString(), TAG, MTIME), false);
    assert.equal(ifRangeHolds('garbage', TAG, MTIME), false);
  });
});
