// A head checked once and handed to Node's field store must go out byte for byte as writeHead(list)
// sends it, Node's own additions (Date, Connection, Keep-Alive, chunked framing) included.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, it } from 'node:test';
import { nodeFields, writeCheckedHead } from '../../src/http/node-fields.js';
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
// Fields Node acts on between runs of others: Cache-Control and Vary go out as one entry.
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

let port = 0;
const server = createServer((req, res) => {
  const list = req.url!.includes('unframed') ? UNFRAMED : req.url!.includes('mixed') ? MIXED : LIST;
  if (req.url!.startsWith('/checked')) {
    const fields = nodeFields(list);
    assert.ok(fields, 'Node’s field store is found on this Node version');
    writeCheckedHead(res, 200, fields);
  } else (res as ServerResponse).writeHead(200, list);
  res.end('hello');
});

before(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});
after(() => server.close());

const withoutDate = (text: string) => text.replace(/\r\nDate: [^\r]*/, '');

for (const [what, version, extra, path] of [
  ['HTTP/1.1 keep-alive', '1.1', '', ''],
  ['Connection: close', '1.1', 'Connection: close\r\n', ''],
  ['HTTP/1.0', '1.0', '', ''],
  ['HTTP/1.1 without a length (chunked)', '1.1', '', '-unframed'],
  ['HTTP/1.0 without a length', '1.0', '', '-unframed'],
  ['runs between fields Node acts on', '1.1', '', '-mixed'],
  ['runs between fields Node acts on, HTTP/1.0', '1.0', '', '-mixed'],
] as const) {
  it(`writes the same bytes as writeHead(list): ${what}`, async () => {
    // A kept-alive connection is read until raw() gives up on it (1 s).
    const ask = (route: string) =>
      raw(port, `GET /${route}${path} HTTP/${version}\r\nHost: a.test\r\n${extra}\r\n`, 1000);
    const [plain, checked] = await Promise.all([ask('plain'), ask('checked')]);
    assert.match(plain, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(plain, /\r\nDate: /);
    assert.match(checked, /\r\nDate: /);
    assert.equal(withoutDate(checked), withoutDate(plain));
  });
}

it('keeps repeated names as separate lines, in order', async () => {
  const text = await raw(port, 'GET /checked HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n');
  assert.match(text, /\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n/);
});

it('refuses what setHeader would refuse, and a name that would set the prototype', () => {
  assert.equal(nodeFields(['X-Bad', 'a\r\nInjected: 1']), undefined);
  assert.equal(nodeFields(['Bad Name', 'x']), undefined);
  assert.equal(nodeFields(['__proto__', 'x']), undefined);
  assert.equal(nodeFields(['Content-Length', '1', 'X-Bad', 'a\nInjected: 1']), undefined);
});

it('joins a run of fields Node does not act on into one entry, in order', () => {
  const fields = nodeFields(['X-A', '1', 'Content-Length', '2', 'X-B', '3', 'x-a', '4'])!;
  assert.deepEqual(Object.entries(fields), [
    ['x-a', ['X-A', '1']],
    ['content-length', ['Content-Length', '2']],
    ['x-b', ['X-B', '3\r\nx-a: 4']],
  ]);
  // Every name Node acts on keeps an entry of its own, so it still frames and keeps alive by it.
  const own = nodeFields([
    'X-A',
    '1',
    'Connection',
    'close',
    'Date',
    'd',
    'Transfer-Encoding',
    'x',
  ]);
  assert.deepEqual(Object.keys(own!), ['x-a', 'connection', 'date', 'transfer-encoding']);
});

it('leaves to writeHead a list whose runs would share a key', () => {
  assert.equal(nodeFields(['X-A', '1', 'Content-Length', '2', 'X-A', '3']), undefined);
});

it('keeps fields named like an object’s own properties', () => {
  const fields = nodeFields(['Constructor', 'a', 'Date', 'd', 'toString', 'b', 'Date', 'e'])!;
  assert.deepEqual(fields['constructor'], ['Constructor', 'a']);
  assert.deepEqual(fields['tostring'], ['toString', 'b']);
  assert.deepEqual(fields['date'], ['Date', ['d', 'e']]);
  assert.equal(Object.getPrototypeOf(fields), null);
});
