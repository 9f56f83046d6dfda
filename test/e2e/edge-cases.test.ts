// Edges of the request path, end to end with a real server and real clients: the compression
// threshold, what the default error pages show.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { request } from '../helpers/http.js';
import { startServer, type RunningServer } from '../helpers/server.js';

const root = mkdtempSync(join(tmpdir(), 'portico-edges-'));
const www = join(root, 'www');
mkdirSync(www, { recursive: true });
writeFileSync(join(www, '256.txt'), 'x'.repeat(256));
writeFileSync(join(www, '257.txt'), 'x'.repeat(257));
after(() => rmSync(root, { recursive: true, force: true }));

describe('compression threshold', () => {
  let s: RunningServer;
  before(async () => {
    s = await startServer(`global:\n  wwwroot: ${www}\n`);
  });
  after(() => s.close());

  it('compresses a body larger than 256 bytes, never one of 256 bytes or less', async () => {
    const headers = { 'accept-encoding': 'gzip' };
    const exact = await request(s.port, '/256.txt', { headers });
    assert.equal(exact.headers['content-encoding'], undefined);
    assert.equal(exact.body.length, 256);
    assert.equal((await request(s.port, '/257.txt', { headers })).headers['content-encoding'], 'gzip');
  });
});

describe('default error pages', () => {
  let s: RunningServer;
  before(async () => {
    s = await startServer(`
global:
  wwwroot: ${www}
  serverAdministratorEmail: ops@example.com
  nonStandardCodes:
    - scode: 500
      url: /boom
    - scode: 503
      url: /busy
`);
  });
  after(() => s.close());

  it('name the administrator on the 500 page only', async () => {
    const boom = await request(s.port, '/boom');
    assert.equal(boom.status, 500);
    assert.match(boom.text, /mailto:ops@example\.com/);
    for (const [path, status] of [['/missing', 404], ['/busy', 503]] as const) {
      const r = await request(s.port, path);
      assert.equal(r.status, status);
      assert.doesNotMatch(r.text, /ops@example\.com/, path);
    }
    const put = await request(s.port, '/', { method: 'PUT' });
    assert.equal(put.status, 405);
    assert.doesNotMatch(put.text, /ops@example\.com/);
  });
});
