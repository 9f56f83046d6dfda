// Path traversal against static files: `..` in every spelling (percent-encoded, double-encoded,
// overlong UTF-8, backslashes, with NUL) must never reach a file beside or above wwwroot, nor one in
// a sibling folder whose name starts like it. The exact answer is asserted too: 404 for a path that
// normalises to a file wwwroot does not have, 400 for one that cannot be decoded.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from '../helpers/http.js';
import { assertRecovered, baseline, exchange, type Baseline } from './harness.js';
import { spawnPortico, type PorticoProcess } from './portico-process.js';

let p: PorticoProcess;
let base: Baseline;

before(async () => {
  p = await spawnPortico('global:\n  wwwroot: www\n', {
    files: {
      'www/index.html': 'hello',
      'www/sub/a.txt': 'in sub',
      'secret.txt': 'SECRET beside wwwroot',
      // A prefix check without a separator would take www2 for a part of www.
      'www2/secret.txt': 'SECRET in a sibling',
    },
  });
  base = await baseline(p, assertServed);
});

after(() => p?.stop());

async function assertServed(): Promise<void> {
  const file = await request(p.port, '/sub/a.txt');
  assert.deepEqual([file.status, file.text], [200, 'in sub']);
}

/** Each request target gets its status, and never a secret in its answer. */
async function assertAnswers(targets: [string, number][]): Promise<void> {
  for (const [target, status] of targets) {
    const answer = await exchange(
      p.port,
      `GET ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
    );
    assert.doesNotMatch(answer.data, /SECRET|root:/, target);
    assert.match(answer.data, new RegExp(`^HTTP/1\\.1 ${status} `), target);
  }
}

describe('path traversal', () => {
  it('keeps `..` in plain and percent-encoded spellings inside wwwroot', async (t) => {
    await assertAnswers([
      ['/../secret.txt', 404],
      ['/../../secret.txt', 404],
      ['/sub/../../secret.txt', 404],
      ['/./.././secret.txt', 404],
      ['//..//secret.txt', 404],
      ['/%2e%2e/secret.txt', 404],
      ['/%2E%2E/secret.txt', 404],
      ['/.%2e/secret.txt', 404],
      ['/%2e%2e%2fsecret.txt', 404],
      ['/..%2fsecret.txt', 404],
      ['/sub/%2e%2e/%2e%2e/secret.txt', 404],
      ['/../www2/secret.txt', 404],
      ['/%2e%2e/www2/secret.txt', 404],
      ['/..%2fwww2%2fsecret.txt', 404],
      ['/../../../../../../etc/passwd', 404],
      ['/%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2fetc%2fpasswd', 404],
      ['//etc/passwd', 404],
      ['/%2fetc%2fpasswd', 404],
      ['http://localhost/../secret.txt', 404],
      // What stays inside is served as usual.
      ['/sub/../index.html', 200],
      ['/sub/%2e%2e/index.html', 200],
      ['/%73ub/a.txt', 200],
    ]);
    await assertServed();
    await assertRecovered(t, p, base);
  });

  it('decodes once: double-encoded dots and slashes are names, not `..`', async (t) => {
    await assertAnswers([
      ['/%252e%252e/secret.txt', 404],
      ['/%252e%252e%252fsecret.txt', 404],
      ['/..%252fsecret.txt', 404],
      ['/..%255csecret.txt', 404],
    ]);
    await assertServed();
    await assertRecovered(t, p, base);
  });

  it('refuses overlong UTF-8 and NUL with 400', async (t) => {
    await assertAnswers([
      ['/%c0%ae%c0%ae/secret.txt', 400],
      ['/%c0%ae%c0%ae%c0%afsecret.txt', 400],
      ['/..%c0%afsecret.txt', 400],
      ['/%e0%80%ae%e0%80%ae/secret.txt', 400],
      ['/secret.txt%00', 400],
      ['/index.html%00.txt', 400],
      ['/%00/../secret.txt', 400],
    ]);
    await assertServed();
    await assertRecovered(t, p, base);
  });

  it('takes a backslash for a character of a name, not a separator', async (t) => {
    await assertAnswers([
      ['/..\\secret.txt', 404],
      ['/sub/..\\..\\secret.txt', 404],
      ['/..%5csecret.txt', 404],
      ['/%5c..%5csecret.txt', 404],
      ['/%2e%2e%5csecret.txt', 404],
    ]);
    await assertServed();
    await assertRecovered(t, p, base);
  });
});
