// The cache as users meet it: a real node:http origin behind the proxy, Portico's `cache` in front
// (`loadModules: [cache, rproxy]`), real clients. One test per requirement of RFC 9111 (§3, §4,
// §5) that applies to a shared cache, each naming its section; then RFC 5861, RFC 9211 and the
// issue's own points (collapsing, bounds, reload).
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import { connect as http2Connect } from 'node:http2';
import { describe, it } from 'node:test';
import { cachingProxy, fixed, get, origin, status, type Handler } from '../helpers/cache-origin.js';
import { request } from '../helpers/http.js';
import { freePort, startServer } from '../helpers/server.js';
import { SERVER_CERT, SERVER_KEY, TEST_CA } from '../helpers/tls.js';
import { until } from '../helpers/wait.js';

describe('cache: storing responses (RFC 9111 §3)', () => {
  it('§3: stores a GET response with explicit freshness and serves it again without the origin', async (t) => {
    const o = await origin(t, fixed({ 'Cache-Control': 'max-age=60' }));
    const s = await cachingProxy(t, o);
    const first = await get(s, '/a');
    assert.equal(status(first), 'Portico; fwd=uri-miss; fwd-status=200; stored');
    const second = await get(s, '/a');
    assert.equal(second.text, first.text);
    assert.match(status(second), /^Portico; hit; ttl=(58|59|60)$/);
    assert.equal(o.hits('/a'), 1);
  });

  it('§3: never stores a response to an unsafe method, which is written through (§4)', async (t) => {
    const o = await origin(t, fixed({ 'Cache-Control': 'max-age=60' }));
    const s = await cachingProxy(t, o);
    for (let i = 0; i < 2; i++) {
      const r = await request(s.port, '/post', { method: 'POST', body: 'x' });
      assert.equal(status(r), 'Portico; fwd=method; fwd-status=200');
    }
    assert.equal(o.hits('/post'), 2);
  });

  it('§3, §5.2.2.5: never stores a response with no-store', async (t) => {
    const o = await origin(t, fixed({ 'Cache-Control': 'no-store, max-age=60' }));
    const s = await cachingProxy(t, o);
    assert.match(status(await get(s, '/ns')), /detail=no-store/);
    await get(s, '/ns');
    assert.equal(o.hits('/ns'), 2);
  });

  it('§5.2.1.5: never stores a response to a request with no-store', async (t) => {
    const o = await origin(t, fixed({ 'Cache-Control': 'max-age=60' }));
    const s = await cachingProxy(t, o);
    assert.equal(
      status(await get(s, '/rns', { 'cache-control': 'no-store' })),
      'Portico; fwd=bypass; fwd-status=200',
    );
    assert.match(status(await get(s, '/rns')), /fwd=uri-miss/);
    assert.equal(o.hits('/rns'), 2);
  });

  it('§3, §5.2.2.7: a shared cache never stores a private response; private="field" drops that field', async (t) => {
    const o = await origin(t, (req, res) => {
      const qualified = req.url === '/field';
      res.writeHead(200, {
        'Cache-Control': qualified ? 'max-age=60, private="X-User"' : 'private, max-age=60',
        'X-User': 'alice',
      });
      res.end('p');
    });
    const s = await cachingProxy(t, o);
    assert.match(status(await get(s, '/private')), /detail=private/);
    await get(s, '/private');
    assert.equal(o.hits('/private'), 2);
    assert.equal((await get(s, '/field')).headers['x-user'], 'alice');
    const hit = await get(s, '/field');
    assert.match(status(hit), /hit/);
    assert.equal(hit.headers['x-user'], undefined);
  });

  it('§3.5: a response to a request with Authorization is stored only with public, s-maxage or must-revalidate', async (t) => {
    const o = await origin(t, (req, res) => {
      const cc: Record<string, string> = {
        '/plain': 'max-age=60',
        '/public': 'public, max-age=60',
        '/smaxage': 's-maxage=60',
        '/mustrevalidate': 'max-age=60, must-revalidate',
      };
      res.writeHead(200, { 'Cache-Control': cc[req.url ?? ''] ?? '' });
      res.end('secret');
    });
    const s = await cachingProxy(t, o);
    const auth = { authorization: 'Bearer abc' };
    for (const path of ['/plain', '/public', '/smaxage', '/mustrevalidate']) {
      await get(s, path, auth);
      await get(s, path, auth);
    }
    assert.equal(o.hits('/plain'), 2);
    assert.equal(o.hits('/public'), 1);
    assert.equal(o.hits('/smaxage'), 1);
    assert.equal(o.hits('/mustrevalidate'), 1);
  });

  it('§3: Vary: * is never stored (§4.1: it never matches)', async (t) => {
    const o = await origin(t, fixed({ 'Cache-Control': 'max-age=60', Vary: '*' }));
    const s = await cachingProxy(t, o);
    assert.match(status(await get(s, '/star')), /detail=vary-star/);
    await get(s, '/star');
    assert.equal(o.hits('/star'), 2);
  });

  it('§3, §5.2.2.3: must-understand with an understood status is stored despite no-store', async (t) => {
    const o = await origin(t, fixed({ 'Cache-Control': 'max-age=60, must-understand, no-store' }));
    const s = await cachingProxy(t, o);
    await get(s, '/mu');
    assert.match(status(await get(s, '/mu')), /hit/);
    assert.equal(o.hits('/mu'), 1);
  });

  it('§3: a response with neither lifetime nor validator is never stored; Set-Cookie is stored only when cacheIgnoreHeaders drops it', async (t) => {
    const o = await origin(t, (req, res) => {
      if (req.url === '/bare') res.writeHead(200);
      else res.writeHead(200, { 'Cache-Control': 'max-age=60', 'Set-Cookie': 'session=alice' });
      res.end('x');
    });
    const s = await cachingProxy(t, o);
    assert.match(status(await get(s, '/bare')), /detail=no-freshness/);
    assert.match(status(await get(s, '/cookie')), /detail=set-cookie/);
    await get(s, '/cookie');
    assert.equal(o.hits('/cookie'), 2);

    const o2 = await origin(t, (_req, res) => {
      res.writeHead(200, { 'Cache-Control': 'max-age=60', 'Set-Cookie': 'session=alice' });
      res.end('x');
    });
    const s2 = await cachingProxy(t, o2, '  cacheIgnoreHeaders: [Set-Cookie]\n');
    const miss = await get(s2, '/cookie');
    assert.equal(miss.headers['set-cookie']?.[0], 'session=alice', 'the origin’s client gets it');
    const hit = await get(s2, '/cookie');
    assert.match(status(hit), /hit/);
    assert.equal(hit.headers['set-cookie'], undefined, 'nobody else does');
  });

  it('§3.1: stores every field received, unrecognised ones included, and none named in Connection', async (t) => {
    const o = await origin(t, (_req, res) => {
      res.writeHead(200, {
        'Cache-Control': 'max-age=60',
        'X-Unknown-Extension': 'kept',
        Connection: 'X-Hop',
        'X-Hop': 'dropped',
      });
      res.end('x');
    });
    const s = await cachingProxy(t, o);
    await get(s, '/fields');
    const hit = await get(s, '/fields');
    assert.match(status(hit), /hit/);
    assert.equal(hit.headers['x-unknown-extension'], 'kept');
    assert.equal(hit.headers['x-hop'], undefined);
  });

  it('§3.3: never serves an incomplete response: a body cut by the origin is not stored', async (t) => {
    let n = 0;
    const o = await origin(t, (_req, res) => {
      n++;
      res.writeHead(200, { 'Cache-Control': 'max-age=60', 'Content-Length': '100000' });
      res.write(Buffer.alloc(1000, 97));
      if (n === 1) setTimeout(() => res.socket?.destroy(), 30);
      else res.end(Buffer.alloc(99000, 97));
    });
    const s = await cachingProxy(t, o);
    await get(s, '/cut').catch(() => undefined);
    const second = await get(s, '/cut');
    assert.equal(second.body.length, 100000);
    assert.match(status(second), /fwd=uri-miss.*stored/);
    assert.match(status(await get(s, '/cut')), /hit/);
  });
});

describe('cache: reusing stored responses (RFC 9111 §4)', () => {
  it('§4: the target URI must match: another query or another Host is another entry', async (t) => {
    const o = await origin(t, fixed({ 'Cache-Control': 'max-age=60' }));
    const s = await cachingProxy(t, o);
    const a = await get(s, '/u?x=1');
    assert.notEqual((await get(s, '/u?x=2')).text, a.text);
    const other = await get(s, '/u?x=1', { host: 'other.example' });
    assert.match(status(other), /fwd=uri-miss/);
    assert.notEqual(other.text, a.text);
    assert.equal((await get(s, '/u?x=1')).text, a.text);
    assert.equal(o.seen.length, 3);
  });

  it('§4: HEAD is answered from a stored GET response, without a body', async (t) => {
    const o = await origin(t, fixed({ 'Cache-Control': 'max-age=60' }));
    const s = await cachingProxy(t, o);
    const full = await get(s, '/head');
    const head = await request(s.port, '/head', { method: 'HEAD', headers: { host: 'localhost' } });
    assert.match(status(head), /hit/);
    assert.equal(head.body.length, 0);
    assert.equal(head.headers['content-length'], String(full.body.length));
    assert.equal(o.hits('/head'), 1);
  });

  it('§4.1: a stored response is used only when the fields its Vary names match, normalised', async (t) => {
    let n = 0;
    const o = await origin(t, (req, res) => {
      n++;
      res.writeHead(200, { 'Cache-Control': 'max-age=60', Vary: 'Accept-Language' });
      res.end(`${req.headers['accept-language']} #${n}`);
    });
    const s = await cachingProxy(t, o);
    const en = await get(s, '/v', { 'accept-language': 'en, fr' });
    const fr = await get(s, '/v', { 'accept-language': 'fr' });
    assert.match(status(fr), /fwd=vary-miss/);
    assert.notEqual(fr.text, en.text);
    const again = await get(s, '/v', { 'accept-language': 'en ,  fr' });
    assert.match(status(again), /hit/);
    assert.equal(again.text, en.text);
    assert.equal((await get(s, '/v', { 'accept-language': 'fr' })).text, fr.text);
    assert.equal(n, 2);
  });

  it('cacheVaryHeaders: add to the response’s Vary and key the entries by those fields too', async (t) => {
    const o = await origin(t, fixed({ 'Cache-Control': 'max-age=60' }));
    const s = await cachingProxy(t, o, '  cacheVaryHeaders: [X-Tenant]\n');
    const a = await get(s, '/t', { 'x-tenant': 'a' });
    // Accept-Encoding too: the text/plain body of unknown length may be compressed.
    assert.equal(a.headers.vary, 'Accept-Encoding, x-tenant');
    const b = await get(s, '/t', { 'x-tenant': 'b' });
    assert.notEqual(b.text, a.text);
    assert.equal((await get(s, '/t', { 'x-tenant': 'a' })).text, a.text);
    assert.equal(o.hits('/t'), 2);
  });

  it('§4.2, §4.2.4: never serves a stale response without validation unless permitted', async (t) => {
    // Age 120 against max-age 60: stale on arrival, and no validator to ask with.
    const o = await origin(t, fixed({ 'Cache-Control': 'max-age=60', Age: '120' }));
    const s = await cachingProxy(t, o);
    await get(s, '/stale');
    assert.match(status(await get(s, '/stale')), /fwd=uri-miss|fwd=stale/);
    assert.equal(o.hits('/stale'), 2);
    // The client's max-stale permits it (§5.2.1.2).
    const allowed = await get(s, '/stale', { 'cache-control': 'max-stale=3600' });
    assert.match(status(allowed), /^Portico; hit; ttl=-6\d$/);
    assert.equal(o.hits('/stale'), 2);
  });

  it('§4.2.1: s-maxage wins over max-age and Expires for a shared cache', async (t) => {
    const o = await origin(
      t,
      fixed({
        'Cache-Control': 'max-age=0, s-maxage=60',
        Expires: 'Thu, 01 Jan 1970 00:00:00 GMT',
      }),
    );
    const s = await cachingProxy(t, o);
    await get(s, '/smax');
    assert.match(status(await get(s, '/smax')), /hit; ttl=(58|59|60)/);
  });

  it('§4.2.1, §5.3: Expires − Date gives the lifetime; an invalid Expires means already expired', async (t) => {
    const o = await origin(t, (req, res) => {
      const now = Date.now();
      res.writeHead(200, {
        Date: new Date(now).toUTCString(),
        Expires: req.url === '/expires' ? new Date(now + 120_000).toUTCString() : '0',
        ETag: '"e"',
      });
      res.end('x');
    });
    const s = await cachingProxy(t, o);
    await get(s, '/expires');
    assert.match(status(await get(s, '/expires')), /hit; ttl=1[12]\d/);
    await get(s, '/expired');
    assert.match(status(await get(s, '/expired')), /fwd=stale/);
  });

  it('§4.2.2: heuristic freshness from Last-Modified only without explicit expiry, capped at 300 s', async (t) => {
    const longAgo = new Date(Date.now() - 365 * 86400_000).toUTCString();
    const o = await origin(t, (req, res) => {
      res.writeHead(200, {
        'Last-Modified': longAgo,
        ...(req.url === '/explicit' ? { 'Cache-Control': 'max-age=0' } : {}),
      });
      res.end('x');
    });
    const s = await cachingProxy(t, o);
    await get(s, '/heuristic');
    assert.match(status(await get(s, '/heuristic')), /hit; ttl=(298|299|300)$/);
    await get(s, '/explicit');
    assert.match(status(await get(s, '/explicit')), /fwd=stale/);
  });

  it('§4.2.3, §5.1: the Age a response arrived with counts; every hit carries the current Age', async (t) => {
    // The cache's clock, moved a second on instead of waiting one.
    t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
    const o = await origin(t, fixed({ 'Cache-Control': 'max-age=60', Age: '50' }));
    const s = await cachingProxy(t, o);
    await get(s, '/age');
    t.mock.timers.tick(1100);
    const hit = await get(s, '/age');
    assert.match(status(hit), /hit; ttl=[6789]$/);
    const age = Number(hit.headers.age);
    assert.ok(age >= 51 && age <= 52, `Age ${age}`);
  });

  it('§5.2.2.2, §4.2.4: once stale, must-revalidate is never served stale, not even for max-stale', async (t) => {
    const o = await origin(t, fixed({ 'Cache-Control': 'max-age=60, must-revalidate', Age: '90' }));
    const s = await cachingProxy(t, o);
    await get(s, '/mr');
    await get(s, '/mr', { 'cache-control': 'max-stale' });
    assert.equal(o.hits('/mr'), 2);
  });

  it('§5.2.2.4: a response with no-cache is validated before every reuse', async (t) => {
    const o = await origin(t, (req, res) => {
      if (req.headers['if-none-match'] === '"nc"') {
        res.writeHead(304, { ETag: '"nc"', 'Cache-Control': 'no-cache' });
        return res.end();
      }
      res.writeHead(200, { ETag: '"nc"', 'Cache-Control': 'no-cache' });
      res.end('body');
    });
    const s = await cachingProxy(t, o);
    await get(s, '/nc');
    const second = await get(s, '/nc');
    assert.equal(second.text, 'body');
    assert.match(status(second), /^Portico; fwd=stale; fwd-status=304; ttl=(0|-1|-2); stored$/);
    assert.equal(o.seen[1]!.headers['if-none-match'], '"nc"');
  });

  it('§5.2.1: the request’s max-age, min-fresh and no-cache send it to the origin', async (t) => {
    const o = await origin(t, fixed({ 'Cache-Control': 'max-age=60', Age: '30' }));
    const s = await cachingProxy(t, o);
    await get(s, '/rq');
    assert.match(status(await get(s, '/rq', { 'cache-control': 'max-age=10' })), /fwd=/);
    assert.match(status(await get(s, '/rq', { 'cache-control': 'min-fresh=40' })), /fwd=/);
    assert.match(status(await get(s, '/rq', { 'cache-control': 'no-cache' })), /fwd=request/);
    assert.match(status(await get(s, '/rq', { pragma: 'no-cache' })), /fwd=request/);
    assert.match(status(await get(s, '/rq', { 'cache-control': 'max-age=100' })), /hit/);
    assert.equal(o.hits('/rq'), 5);
  });

  it('§5.2.1.7: only-if-cached gets a 504 when nothing stored will do', async (t) => {
    const o = await origin(t, fixed({ 'Cache-Control': 'max-age=60' }));
    const s = await cachingProxy(t, o);
    const r = await get(s, '/oic', { 'cache-control': 'only-if-cached' });
    assert.equal(r.status, 504);
    assert.equal(o.hits('/oic'), 0);
    await get(s, '/oic');
    assert.equal((await get(s, '/oic', { 'cache-control': 'only-if-cached' })).status, 200);
  });
});

describe('cache: validation (RFC 9111 §4.3)', () => {
  function validating(version: () => string): Handler {
    let n = 0;
    return (req, res) => {
      n++;
      const tag = `"${version()}"`;
      const headers = {
        'Cache-Control': 'max-age=60',
        Age: '100',
        ETag: tag,
        'Last-Modified': 'Tue, 01 Jan 2030 00:00:00 GMT',
        'X-Origin-Count': String(n),
      };
      if (req.headers['if-none-match'] === tag) {
        res.writeHead(304, headers);
        return res.end();
      }
      res.writeHead(200, { ...headers, 'Content-Type': 'text/plain' });
      res.end(`version ${version()}`);
    };
  }

  it('§4.3.1: asks with the stored ETag and Last-Modified; §4.3.3, §3.2: a 304 freshens the stored fields', async (t) => {
    const o = await origin(
      t,
      validating(() => 'v1'),
    );
    const s = await cachingProxy(t, o);
    await get(s, '/val');
    const second = await get(s, '/val', { 'if-none-match': '"other"' });
    assert.equal(o.seen[1]!.headers['if-none-match'], '"v1"', 'the stored tag, not the client’s');
    assert.equal(o.seen[1]!.headers['if-modified-since'], 'Tue, 01 Jan 2030 00:00:00 GMT');
    assert.equal(second.status, 200);
    assert.equal(second.text, 'version v1');
    assert.match(status(second), /fwd=stale; fwd-status=304/);
    assert.equal(second.headers['x-origin-count'], '2', 'the 304’s fields replace the stored ones');
    assert.equal(second.headers['content-type'], 'text/plain');
  });

  it('§4.3.3: a full response to a validation request replaces the stored one', async (t) => {
    let version = 'v1';
    const o = await origin(
      t,
      validating(() => version),
    );
    const s = await cachingProxy(t, o);
    await get(s, '/replace');
    version = 'v2';
    const r = await get(s, '/replace');
    assert.equal(r.text, 'version v2');
    assert.match(status(r), /fwd=stale; fwd-status=200; stored/);
  });

  it('§4.3.2: a client’s conditional request is answered 304 from a fresh entry', async (t) => {
    const o = await origin(
      t,
      fixed({
        'Cache-Control': 'max-age=60',
        ETag: 'W/"w1"',
        'Last-Modified': 'Mon, 01 Jan 2024 00:00:00 GMT',
      }),
    );
    const s = await cachingProxy(t, o);
    await get(s, '/cond');
    const byTag = await get(s, '/cond', { 'if-none-match': '"x", "w1"' });
    assert.equal(byTag.status, 304);
    assert.equal(byTag.body.length, 0);
    assert.equal(byTag.headers.etag, 'W/"w1"');
    assert.match(status(byTag), /hit/);
    const byDate = await get(s, '/cond', { 'if-modified-since': 'Tue, 02 Jan 2024 00:00:00 GMT' });
    assert.equal(byDate.status, 304);
    assert.equal((await get(s, '/cond', { 'if-none-match': '"nope"' })).status, 200);
    assert.equal(o.hits('/cond'), 1);
  });
});

describe('cache: invalidation (RFC 9111 §4.4)', () => {
  it('a successful unsafe request invalidates its URL and the same-origin Location and Content-Location, not another host’s', async (t) => {
    let n = 0;
    const o = await origin(t, (req, res) => {
      n++;
      if (req.method === 'POST') {
        res.writeHead(req.url === '/fail' ? 500 : 201, {
          Location: '/loc',
          'Content-Location': 'http://elsewhere.example/cl',
        });
        return res.end();
      }
      res.writeHead(200, { 'Cache-Control': 'max-age=60' });
      res.end(`${req.url} #${n}`);
    });
    const s = await cachingProxy(t, o);
    for (const path of ['/item', '/loc']) await get(s, path);
    await get(s, '/cl', { host: 'elsewhere.example' });
    await request(s.port, '/item', { method: 'POST', headers: { host: 'localhost' } });
    assert.match(status(await get(s, '/item')), /fwd=uri-miss/);
    assert.match(status(await get(s, '/loc')), /fwd=uri-miss/);
    assert.match(status(await get(s, '/cl', { host: 'elsewhere.example' })), /hit/);
    await request(s.port, '/fail', { method: 'DELETE', headers: { host: 'localhost' } });
    await request(s.port, '/item', { method: 'POST', headers: { host: 'localhost' }, body: '' });
    // An error status invalidates nothing.
    await get(s, '/loc');
    const before = o.hits('/loc');
    await request(s.port, '/fail', { method: 'POST', headers: { host: 'localhost' } });
    await get(s, '/loc');
    assert.equal(o.hits('/loc'), before);
  });
});

describe('cache: stale content (RFC 5861)', () => {
  it('stale-while-revalidate: the stale response at once, validated in the background', async (t) => {
    let n = 0;
    const o = await origin(t, (req, res) => {
      n++;
      const headers = {
        'Cache-Control': 'max-age=30, stale-while-revalidate=60',
        ETag: '"s1"',
        'X-N': String(n),
      };
      if (req.headers['if-none-match'] === '"s1"') {
        res.writeHead(304, headers);
        return res.end();
      }
      // 40 s old on arrival: stale, within stale-while-revalidate.
      res.writeHead(200, { ...headers, Age: '40' });
      res.end('swr');
    });
    const s = await cachingProxy(t, o);
    await get(s, '/swr');
    const stale = await get(s, '/swr');
    assert.match(status(stale), /^Portico; hit; ttl=-\d+; detail=stale-while-revalidate$/);
    assert.equal(stale.headers['x-n'], '1');
    await until(() => o.hits('/swr') === 2, { what: 'the background validation' });
    assert.equal(o.seen[1]!.headers['if-none-match'], '"s1"');
    // Its 304 freshens the entry once it is back.
    const fresh = await until(() => get(s, '/swr'), {
      ok: (r) => r.headers['x-n'] === '2',
      what: 'the entry freshened',
    });
    assert.match(status(fresh), /^Portico; hit; ttl=(27|28|29)$/);
    assert.equal(fresh.headers['x-n'], '2', 'freshened by the background 304');
    assert.equal(o.hits('/swr'), 2);
  });

  it('stale-while-revalidate: a validation the origin never answers is given up after `timeout`, and the next one runs', async (t) => {
    let n = 0;
    const o = await origin(t, (_req, res) => {
      n++;
      // The first validation hangs; the others answer.
      if (n === 2) return;
      res.writeHead(200, {
        'Cache-Control': 'max-age=30, stale-while-revalidate=60',
        Age: '40',
        'X-N': String(n),
      });
      res.end('swr');
    });
    const s = await cachingProxy(t, o, '  timeout: 400\n');
    await get(s, '/hang');
    await get(s, '/hang');
    await until(() => o.hits('/hang') === 2, { what: 'the background validation at the origin' });
    // Still under way: no second validation of the same response.
    await get(s, '/hang');
    assert.equal(o.hits('/hang'), 2);
    // Once the hung one is given up, a stale hit starts the next. A hit asks only while the origin
    // has not seen a third: a third started and not yet arrived is under way, so no fourth starts.
    await until(
      async () => {
        if (o.hits('/hang') < 3) await get(s, '/hang');
        return o.hits('/hang');
      },
      { ok: (n) => n >= 3, what: 'a validation after the hung one' },
    );
    assert.equal(o.hits('/hang'), 3, 'the hung one was given up');
  });

  it('stale-if-error: a stale response stands in for a dead origin or a 5xx; without it, the error', async (t) => {
    let broken = false;
    const o = await origin(t, (req, res) => {
      if (broken) {
        res.writeHead(503);
        return res.end('down');
      }
      const sie = req.url === '/sie' ? ', stale-if-error=600' : '';
      // Stale on arrival; the tag lets it be validated.
      res.writeHead(200, { 'Cache-Control': `max-age=1${sie}`, Age: '5', ETag: '"e"' });
      res.end('good');
    });
    const s = await cachingProxy(t, o);
    await get(s, '/sie');
    await get(s, '/plain');
    broken = true;
    const fromError = await get(s, '/sie');
    assert.equal(fromError.text, 'good');
    assert.match(status(fromError), /fwd=stale; fwd-status=503; ttl=-\d+; detail=stale-if-error/);
    assert.equal((await get(s, '/plain')).status, 503);
    await o.close();
    const fromDead = await get(s, '/sie');
    assert.equal(fromDead.text, 'good');
    assert.match(status(fromDead), /fwd-status=503; .*detail=stale-if-error/);
  });
});

describe('cache: collapsing, bounds, streaming, reload', () => {
  it('200 concurrent requests for one cold key reach the origin once', async (t) => {
    // The origin answers once every request has reached the cache.
    let release!: () => void;
    const allIn = new Promise<void>((resolve) => (release = resolve));
    const o = await origin(t, (_req, res) => {
      void allIn.then(() => {
        res.writeHead(200, { 'Cache-Control': 'max-age=60' });
        res.end('once');
      });
    });
    const s = await cachingProxy(t, o);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 200 });
    t.after(() => agent.destroy());
    const received = s.server.requestsTotal;
    const answered = Promise.all(
      Array.from(
        { length: 200 },
        () =>
          new Promise<{ status: number; cache: string; body: string }>((resolve, reject) => {
            http
              .get(
                { port: s.port, host: '127.0.0.1', path: '/cold', agent, headers: { host: 'x' } },
                (res) => {
                  let body = '';
                  res.on('data', (d) => (body += d));
                  res.on('end', () =>
                    resolve({
                      status: res.statusCode ?? 0,
                      cache: String(res.headers['cache-status']),
                      body,
                    }),
                  );
                },
              )
              .on('error', reject);
          }),
      ),
    );
    await until(() => s.server.requestsTotal - received, {
      ok: (n) => n === 200,
      what: 'the 200 requests received',
    });
    // A request's way to the cache's wait runs on in the turn it was received in.
    await new Promise((resolve) => setImmediate(resolve));
    release();
    const replies = await answered;
    assert.equal(o.hits('/cold'), 1);
    assert.ok(replies.every((r) => r.status === 200 && r.body === 'once'));
    assert.equal(replies.filter((r) => /collapsed/.test(r.cache)).length, 199);
  });

  it('a response over maximumCacheResponseSize streams to the client as it arrives and is not stored', async (t) => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const o = await origin(t, (_req, res) => {
      res.writeHead(200, { 'Cache-Control': 'max-age=60' });
      res.write(Buffer.alloc(600_000, 98));
      void gate.then(() => res.end(Buffer.alloc(600_000, 98)));
    });
    const s = await cachingProxy(t, o, '  maximumCacheResponseSize: 1000000\n');
    let firstDone!: Promise<unknown>;
    const firstBytes = await new Promise<{ got: number; cache: string }>((resolve, reject) => {
      http
        .get({ port: s.port, host: '127.0.0.1', path: '/big', headers: { host: 'x' } }, (res) => {
          firstDone = once(res, 'end');
          let got = 0;
          res.on('data', (d: Buffer) => {
            got += d.length;
            // Over half the body before the origin sends the rest: nothing waits for the whole.
            if (got >= 600_000 && got - d.length < 600_000) {
              resolve({ got, cache: String(res.headers['cache-status']) });
              release();
            }
          });
        })
        .on('error', reject);
    });
    assert.match(firstBytes.cache, /stored/, 'it looked storable at the head');
    // Not collapsed onto the first: that one is over.
    await firstDone;
    const second = await get(s, '/big');
    assert.equal(second.body.length, 1_200_000);
    assert.match(status(second), /fwd=uri-miss/);
  });

  it('serves HTTP/2 clients from the cache', async (t) => {
    const o = await origin(t, fixed({ 'Cache-Control': 'max-age=60' }));
    const sport = await freePort();
    await cachingProxy(
      t,
      o,
      `  secure: true\n  sport: "127.0.0.1:${sport}"\n  cert: ${SERVER_CERT}\n  key: ${SERVER_KEY}\n`,
    );
    const client = http2Connect(`https://localhost:${sport}`, { ca: TEST_CA });
    t.after(() => client.close());
    const h2get = () =>
      new Promise<string>((resolve) => {
        const r = client.request({ ':path': '/h2' });
        r.on('response', (h) => resolve(String(h['cache-status'])));
        r.resume();
      });
    assert.match(await h2get(), /fwd=uri-miss/);
    assert.match(await h2get(), /hit/);
    assert.equal(o.hits('/h2'), 1);
  });

  it('lets Server-Sent Events through event by event', async (t) => {
    const o = await origin(t, (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
      res.write('data: one\n\n');
      setTimeout(() => res.end('data: two\n\n'), 300);
    });
    const s = await cachingProxy(t, o);
    const firstEvent = await new Promise<string>((resolve, reject) => {
      http
        .get({ port: s.port, host: '127.0.0.1', path: '/events', headers: { host: 'x' } }, (res) =>
          res.once('data', (d: Buffer) => {
            resolve(d.toString());
            res.resume();
          }),
        )
        .on('error', reject);
    });
    assert.equal(firstEvent, 'data: one\n\n');
  });

  it('keeps what it stored across a reload that keeps its settings', async (t) => {
    const o = await origin(t, fixed({ 'Cache-Control': 'max-age=60' }));
    const config = `global:\n  loadModules: [cache, rproxy]\n  proxyTo: ${o.url}\n`;
    const s = await startServer(config);
    t.after(() => s.close());
    await get(s, '/r');
    s.rewrite(`${config}  serverAdministratorEmail: admin@example.com\n`);
    assert.equal((await s.server.reloadFromSource()).ok, true);
    assert.match(status(await get(s, '/r')), /hit/);
    assert.equal(o.hits('/r'), 1);
  });
});
