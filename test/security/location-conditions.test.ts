// Hostile input to the conditional locations: paths, header values and queries as large as a
// request head may be (16 KB over HTTP/1.1, 64 KB over HTTP/2), forty at once, against fifty
// patterns of the kinds sites write. The time a pattern takes is the operator's choice (validate
// warns of the shape that is slow, slow-patterns.ts), but these run in time linear in what they
// read, which the head limits bound: every hostile request is answered within 3 s while a plain one
// is served, and the server gives back what it took.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from '../helpers/http.js';
import {
  assertRecovered,
  baseline,
  exchange,
  h2Connect,
  statusLines,
  type Baseline,
} from './harness.js';
import { spawnPortico, type PorticoProcess } from './portico-process.js';

const PATTERNS = [
  '\\.css$',
  '\\.(js|mjs|map)$',
  '(?i)\\.jpe?g$',
  '^/api/v[0-9]+/(users|orders)(/|$)',
  '/\\.(git|svn|hg)/',
  '^/(en|de|fr)/docs/',
  '^/blog/[0-9]{4}/[0-9]{2}/',
  '/index\\.php/',
  '/[^/]+\\.tar\\.gz$',
  '(?<=/)wp-(admin|login)',
];
// Fifty locations: the patterns above five times over, each behind a different prefix but the last.
const LOCATIONS = Array.from({ length: 50 }, (_, i) => {
  const pattern = PATTERNS[i % PATTERNS.length]!;
  const path = i < 40 ? `        path: /p${i}\n` : '';
  return `      - pathRegex: ${JSON.stringify(pattern)}\n${path}        customHeaders:\n          X-Location: "${i}"\n`;
}).join('');

let p: PorticoProcess;
let base: Baseline;

before(async () => {
  p = await spawnPortico(
    `global:\n  wwwroot: www\n  disableToHTTPSRedirect: true\nhosts:\n  - domain: localhost\n    locations:\n${LOCATIONS}` +
      '      - matchHeaders:\n          X-Token: "^[A-Za-z0-9]{8,}$"\n          User-Agent: "bot|crawler|spider"\n' +
      '        customHeaders:\n          X-Location: headers\n' +
      '      - matchQuery:\n          q: "^[a-z]+$"\n        customHeaders:\n          X-Location: query\n',
    { tls: true, files: { 'www/index.html': 'hello', 'www/a.css': 'css' } },
  );
  base = await baseline(p, assertServed);
});

after(() => p?.stop());

async function assertServed(): Promise<void> {
  const file = await request(p.port, '/a.css', { headers: { host: 'localhost' } });
  assert.deepEqual([file.status, file.text, file.headers['x-location']], [200, 'css', '40']);
}

const head = (target: string, fields = '') =>
  `GET ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n${fields}\r\n`;

describe('conditional locations under hostile input', () => {
  it('16 KB paths, header values and queries, forty at once over HTTP/1.1', async (t) => {
    const near = 15 * 1024;
    const attacks = [
      // The patterns' literals over and over, none where its pattern wants it.
      head(`/${'a.cs/.git/index.php.tar.g'.repeat(near / 26)}x`),
      head(`/${'a'.repeat(near)}.cs`),
      head('/missing', `X-Token: ${'A'.repeat(near)}!\r\nUser-Agent: ${'botx'.repeat(100)}\r\n`),
      head('/missing', `X-Token: abcdefgh\r\nUser-Agent: ${'b'.repeat(near)}\r\n`),
      head(`/missing?${'q=abc1&'.repeat(near / 7)}q=1`),
    ];
    const answers = Promise.all(
      Array.from({ length: 40 }, (_, i) => exchange(p.port, attacks[i % attacks.length]!)),
    );
    await assertServed();
    for (const [i, answer] of (await answers).entries()) {
      assert.ok(answer.closed, `attack ${i % attacks.length} was not answered within 3 s`);
      assert.deepEqual(statusLines(answer.data), ['HTTP/1.1 404 Not Found'], `attack ${i}`);
    }
    // The same conditions still take what they should.
    const query = await exchange(p.port, head(`/missing?${'q=1&'.repeat(3000)}q=abc`));
    assert.match(query.data, /\r\nX-Location: query\r\n/i);
    await assertServed();
    await assertRecovered(t, p, base);
  });

  it('a 60 KB path over HTTP/2, ten streams at once', async (t) => {
    const session = h2Connect(p.sport!);
    const path = `/${'x.cs/'.repeat(12 * 1024)}`;
    const statuses = await Promise.all(
      Array.from(
        { length: 10 },
        () =>
          new Promise<number>((resolve, reject) => {
            const stream = session.request({ ':path': path, ':authority': 'localhost' });
            stream.on('response', (h) => resolve(Number(h[':status'])));
            stream.on('error', reject);
            stream.resume();
          }),
      ),
    );
    session.close();
    assert.deepEqual(new Set(statuses), new Set([404]));
    await assertServed();
    await assertRecovered(t, p, base);
  });
});
