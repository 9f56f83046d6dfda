// What a Ctx hands the request builders and the cache's background copy.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Response } from '../../src/http/ctx.js';
import { replacedFields } from '../../src/http/outgoing-fields.js';
import { fakeCtx } from '../helpers/ctx.js';

it('hands backends the request itself until a stage replaces its fields', () => {
  const { ctx } = fakeCtx({ headers: { accept: '*/*' } });
  Object.assign(ctx.req, { rawHeaders: ['Accept', '*/*'] });
  assert.equal(ctx.outgoing, ctx.req, 'nothing built for a request nobody changed');
  const previous = ctx.outgoing;
  ctx.outgoing = replacedFields(previous, new Map([['if-none-match', '"v"']]));
  assert.equal(ctx.outgoing.headers['if-none-match'], '"v"');
  ctx.outgoing = previous;
  assert.equal(ctx.outgoing, ctx.req);
});

it('a detached copy carries the request, not its response state', () => {
  const { ctx } = fakeCtx({ path: '/a', query: '?b', host: 'h.test:8080', clientAddress: '::1' });
  Object.assign(ctx.req, { rawHeaders: [] });
  ctx.user = 'u';
  ctx.path = '/rewritten';
  ctx.status = 200;
  ctx.outgoing = replacedFields(ctx.outgoing, new Map([['x-a', '1']]));
  const res = {} as Response;
  const copy = ctx.detached(res);
  assert.equal(copy.res, res);
  assert.equal(copy.req, ctx.req);
  assert.equal(copy.resolved, ctx.resolved);
  assert.deepEqual(
    [copy.clientAddress, copy.hostHeader, copy.hostname, copy.user, copy.originalPath, copy.path],
    ['::1', 'h.test:8080', 'h.test', 'u', '/a', '/rewritten'],
  );
  assert.equal(copy.query, '?b');
  assert.equal(copy.outgoing, ctx.outgoing);
  assert.equal(copy.status, 0);
  assert.equal(copy.deadline, undefined);
  assert.equal(copy.tap, undefined);
});
