// Node's private internals as Portico uses them (src/http/node-internals.ts): each self-test passes
// on this Node, and each public fallback, forced, gives the same result. A head handed to Node's
// field store must go out byte for byte as writeHead(list) sends it, Node's own additions (Date,
// Connection, Keep-Alive, chunked framing) included, and only fields setHeader accepts get there.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, describe, it } from 'node:test';
import * as tls from 'node:tls';
import { Ctx } from '../../src/http/ctx.js';
import {
  contextSwapWorks,
  fieldStore,
  usePrivateApis,
  usePublicApi,
  writeStoredHead,
} from '../../src/http/node-internals.js';
import { KeptHead, sendKept } from '../../src/http/respond.js';
import { raw } from '../helpers/http.js';

const LIST = [
  'Content-Type',
  'text/html; charset=utf-8',
  'Content-Length',
  '5',
  'ETag',
  '"5-abc"',
  'Set-Cookie',
  'a=1',
  'Set-Cookie',
  'b=2',
  'Server',
  'Portico',
];
// Fields Node acts on (framing, keep-alive) between others.
const MIXED = [
  'X-Early',
  'a',
  'Content-Length',
  '5',
  'Cache-Control',
  'no-cache',
  'Vary',
  'Accept-Encoding',
  'Connection',
  'keep-alive',
  'Server',
  'Portico',
];
// Without a length, Node frames the body itself: chunked over HTTP/1.1, until close over 1.0.
const UNFRAMED = ['Content-Type', 'text/plain', 'Server', 'Portico'];

/** A kept head per test run, so that each is finished (and its store made) afresh. */
let kept: KeptHead | undefined;

const server = createServer((req: IncomingMessage, res: ServerResponse) => {
  const url = req.url!;
  const list = url.includes('unframed') ? UNFRAMED : url.includes('mixed') ? MIXED : LIST;
  if (url.startsWith('/stored')) {
    const store = fieldStore(list);
    assert.ok(store, 'Node’s field store is used on this Node version');
    writeStoredHead(res, 200, store);
    res.end('hello');
  } else if (url.startsWith('/kept')) {
    const ctx = new Ctx({
      req,
      res,
      scheme: 'http',
      addresses: { remote: '127.0.0.1', remotePort: 1, local: '127.0.0.1', localPort: 2 },
    });
    sendKept(ctx, (kept ??= new KeptHead(LIST.slice(0, -2))), Buffer.from('hello'));
  } else {
    res.writeHead(200, list);
    res.end('hello');
  }
});

let port = 0;
before(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});
after(() => server.close());
afterEach(() => usePrivateApis());

const withoutDate = (text: string) => text.replace(/\r\nDate: [^\r]*/, '');

describe('the field store', () => {
  for (const [what, version, extra, path] of [
    ['HTTP/1.1 keep-alive', '1.1', '', ''],
    ['Connection: close', '1.1', 'Connection: close\r\n', ''],
    ['HTTP/1.0', '1.0', '', ''],
    ['HTTP/1.1 without a length (chunked)', '1.1', '', '-unframed'],
    ['HTTP/1.0 without a length', '1.0', '', '-unframed'],
    ['fields Node acts on between others', '1.1', '', '-mixed'],
    ['fields Node acts on between others, HTTP/1.0', '1.0', '', '-mixed'],
  ] as const) {
    it(`writes the same bytes as writeHead(list): ${what}`, async () => {
      // A kept-alive connection is read until raw() gives up on it (1 s).
      const ask = (route: string) =>
        raw(port, `GET /${route}${path} HTTP/${version}\r\nHost: a.test\r\n${extra}\r\n`, 1000);
      const [plain, stored] = await Promise.all([ask('plain'), ask('stored')]);
      assert.match(plain, /^HTTP\/1\.1 200 OK\r\n/);
      assert.match(plain, /\r\nDate: /);
      assert.match(stored, /\r\nDate: /);
      assert.equal(withoutDate(stored), withoutDate(plain));
    });
  }

  it('keeps repeated names as separate lines, in order', async () => {
    const text = await raw(port, 'GET /stored HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n');
    assert.match(text, /\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n/);
  });

  it('takes only what setHeader takes: no line break in a value, no invalid name', () => {
    assert.equal(fieldStore(['X-Bad', 'a\r\nInjected: 1']), undefined);
    assert.equal(fieldStore(['X-Bad', 'a\nInjected: 1']), undefined);
    assert.equal(fieldStore(['Bad Name', 'x']), undefined);
    assert.equal(fieldStore(['Content-Length', '1', 'X-Bad', 'a\nInjected: 1']), undefined);
    assert.equal(fieldStore(['X-A', '1', 'X-Bad', 'b\rc']), undefined);
  });

  it('holds each field as setHeader holds it, one entry per name, in order', () => {
    const store = fieldStore(['X-A', '1', 'Content-Length', '2', 'X-B', '3', 'X-B', '4'])!;
    assert.deepEqual(Object.entries(store), [
      ['x-a', ['X-A', '1']],
      ['content-length', ['Content-Length', '2']],
      ['x-b', ['X-B', ['3', '4']]],
    ]);
    assert.equal(Object.getPrototypeOf(store), null);
  });

  it('leaves to writeHead a list a store cannot write as it does', () => {
    // A name again after others, or spelt otherwise: writeHead keeps the order and the spelling.
    assert.equal(fieldStore(['X-A', '1', 'Content-Length', '2', 'X-A', '3']), undefined);
    assert.equal(fieldStore(['Set-Cookie', 'a=1', 'set-cookie', 'b=2']), undefined);
    // Node joins repeated Cookie values, and rewrites repeated Content-Disposition ones in place.
    assert.equal(fieldStore(['Cookie', 'a=1', 'Cookie', 'b=2']), undefined);
    assert.equal(
      fieldStore(['Content-Length', '1', 'Content-Disposition', 'a', 'Content-Disposition', 'b']),
      undefined,
    );
    // A valid token that as a key would set the prototype rather than a field.
    assert.equal(fieldStore(['__proto__', 'x']), undefined);
  });

  it('keeps fields named like an object’s own properties', () => {
    const store = fieldStore([
      'Constructor',
      'a',
      'Date',
      'd',
      'toString',
      'b',
      'hasOwnProperty',
      'c',
    ])!;
    assert.deepEqual(store['constructor'], ['Constructor', 'a']);
    assert.deepEqual(store['tostring'], ['toString', 'b']);
    assert.deepEqual(store['hasownproperty'], ['hasOwnProperty', 'c']);
  });

  it('passes its self-test on this Node, and is not used once the public API is forced', () => {
    assert.ok(fieldStore(LIST));
    usePublicApi('field-store');
    assert.equal(fieldStore(LIST), undefined);
    usePrivateApis();
    assert.ok(fieldStore(LIST));
  });

  it('sends a kept head the same with the store and with writeHead(list) forced', async () => {
    const ask = async () => {
      kept = undefined;
      return withoutDate(
        await raw(port, 'GET /kept HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n'),
      );
    };
    const stored = await ask();
    usePublicApi('field-store');
    const listed = await ask();
    assert.match(stored, /^HTTP\/1\.1 200 OK\r\nContent-Type: text\/html; charset=utf-8\r\n/);
    assert.match(stored, /\r\nServer: Portico\r\n/);
    assert.equal(stored, listed);
  });
});

describe('the context a TLS connection starts with', () => {
  // Which certificate each way gives is proven end to end in test/server/certificate-contexts.test.ts.
  it('passes its self-test on this Node, and is not used once the public API is forced', () => {
    assert.equal(contextSwapWorks(tls), true);
    usePublicApi('context-swap');
    assert.equal(contextSwapWorks(tls), false);
    usePrivateApis();
    assert.equal(contextSwapWorks(tls), true);
  });
});
