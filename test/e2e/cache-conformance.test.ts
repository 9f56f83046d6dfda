// What the public HTTP caching test suite (scripts/cache-conformance.sh) found, kept as tests of
// our own: Age lists, strict HTTP dates, CDN-Cache-Control (RFC 9213), 103 Early Hints passed on
// and never replayed, and a 304 that carries the representation's Content-Length.
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { describe, it } from 'node:test';
import { cachingProxy, fixed, get, origin, status } from '../helpers/cache-origin.js';

const hit = (s: string) => /; hit/.test(s);

describe('cache: what the conformance suite asks', () => {
  it('§5.1: of several Age values, the first is the one meant', async (t) => {
    const now = new Date().toUTCString();
    for (const [age, fresh] of [
      [['7200, 0'], false],
      [['0, 7200'], true],
      [['7200', '0'], false],
    ] as const) {
      const o = await origin(
        t,
        fixed({ 'Cache-Control': 'max-age=3600', Date: now, Age: [...age] }),
      );
      const s = await cachingProxy(t, o);
      await get(s, '/a');
      assert.equal(hit(status(await get(s, '/a'))), fresh, `Age: ${age.join(' | ')}`);
    }
  });

  it('§5.3: an Expires that is not an HTTP date is already expired; the obsolete forms are dates', async (t) => {
    const later = new Date(Date.now() + 3_600_000);
    const day = later.toUTCString().slice(0, 3);
    const [, dd, mon, yyyy, time] = later.toUTCString().split(' ');
    const longDay = {
      Sun: 'Sunday',
      Mon: 'Monday',
      Tue: 'Tuesday',
      Wed: 'Wednesday',
      Thu: 'Thursday',
      Fri: 'Friday',
      Sat: 'Saturday',
    }[day]!;
    const cases: [string, boolean][] = [
      [later.toUTCString(), true],
      [`${longDay}, ${dd}-${mon}-${yyyy!.slice(2)} ${time} GMT`, true],
      [`${day} ${mon} ${String(Number(dd)).padStart(2, ' ')} ${time} ${yyyy}`, true],
      [later.toUTCString().replace('GMT', 'UTC'), false],
      [later.toUTCString().replace(',', ''), false],
      [later.toUTCString().replace(' ', '  '), false],
      [`${day}, ${dd}-${mon}-${yyyy} ${time} GMT`, false],
      [later.toUTCString().replace(/ 0(\d):/, ' $1:'), later.getUTCHours() >= 10],
    ];
    for (const [expires, fresh] of cases) {
      const o = await origin(t, fixed({ Expires: expires, Date: new Date().toUTCString() }));
      const s = await cachingProxy(t, o);
      await get(s, '/e');
      assert.equal(hit(status(await get(s, '/e'))), fresh, `Expires: ${expires}`);
    }
  });

  it('RFC 9213: CDN-Cache-Control speaks for this cache over Cache-Control; an invalid one is ignored whole', async (t) => {
    for (const [fields, fresh] of [
      [{ 'CDN-Cache-Control': 'max-age=3600', 'Cache-Control': 'no-store' }, true],
      [{ 'CDN-Cache-Control': 'max-age=600', 'Cache-Control': 'max-age=0' }, true],
      [{ 'CDN-Cache-Control': 'no-store', 'Cache-Control': 'max-age=3600' }, false],
      [{ 'CDN-Cache-Control': 'private', 'Cache-Control': 'max-age=3600' }, false],
      [{ 'CDN-Cache-Control': 'max-age=0', 'Cache-Control': 'max-age=3600' }, false],
      [{ 'CDN-Cache-Control': 'max-age=3600, &&&', 'Cache-Control': 'no-store' }, false],
      [{ 'CDN-Cache-Control': 'max-age="3600"', 'Cache-Control': 'no-store' }, false],
      [{ 'CDN-Cache-Control': 'MaX-aGe=3600', 'Cache-Control': 'max-age=3600' }, true],
    ] as const) {
      const o = await origin(t, fixed(fields));
      const s = await cachingProxy(t, o);
      const first = await get(s, '/c');
      // Passed on as it came: the caches after this one read Cache-Control.
      assert.equal(first.headers['cdn-cache-control'], fields['CDN-Cache-Control']);
      assert.equal(hit(status(await get(s, '/c'))), fresh, JSON.stringify(fields));
    }
  });

  it('passes a backend’s 103 Early Hints on, and never replays them from the cache', async (t) => {
    const o = await origin(t, (_req, res) => {
      res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' });
      res.writeHead(200, { 'Cache-Control': 'max-age=3600', 'Content-Type': 'text/plain' });
      res.end('page');
    });
    const s = await cachingProxy(t, o);
    const fetchWithHints = () =>
      new Promise<{ hints: string[]; body: string; status: string }>((resolve, reject) => {
        const hints: string[] = [];
        const req = httpRequest({
          port: s.port,
          host: '127.0.0.1',
          path: '/p',
          headers: { host: 'localhost' },
        });
        req.on('information', (info) =>
          hints.push(`${info.statusCode} ${String(info.headers.link)}`),
        );
        req.on('response', (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (d: string) => (body += d));
          res.on('end', () =>
            resolve({ hints, body, status: String(res.headers['cache-status']) }),
          );
        });
        req.on('error', reject);
        req.end();
      });
    const first = await fetchWithHints();
    assert.deepEqual(first.hints, ['103 </style.css>; rel=preload; as=style']);
    assert.equal(first.body, 'page');
    const second = await fetchWithHints();
    assert.ok(hit(second.status), second.status);
    assert.deepEqual(second.hints, []);
  });

  it('§3.2: a 304 carrying the representation’s Content-Length freshens the stored response, which keeps its own', async (t) => {
    const body = 'x'.repeat(36);
    const o = await origin(t, (req, res) => {
      // no-cache: stored, and validated before every reuse.
      const fields = { ETag: '"v1"', 'Cache-Control': 'no-cache', Date: new Date().toUTCString() };
      if (req.headers['if-none-match'] === '"v1"') {
        res.writeHead(304, { ...fields, 'Content-Length': '10' });
        res.end();
      } else {
        res.writeHead(200, { ...fields, 'Content-Length': String(body.length) });
        res.end(body);
      }
    });
    const s = await cachingProxy(t, o);
    assert.equal((await get(s, '/v')).text, body);
    const validated = await get(s, '/v');
    assert.equal(validated.status, 200);
    assert.equal(validated.text, body);
    assert.equal(validated.headers['content-length'], String(body.length));
    assert.equal(o.hits('/v'), 2);
  });
});
