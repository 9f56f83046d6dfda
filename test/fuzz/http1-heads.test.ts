// Fuzzing HTTP/1.1 request heads over raw sockets against a Portico process: request lines of any
// method, target (percent-encodings, dot segments, absolute-form, authority-form, `*`) and version,
// fields valid and not (bad names and values, obs-fold, bare CR and LF, Content-Length and
// Transfer-Encoding duplicated or contradicting). Each reply must be nothing or well-formed HTTP/1.1
// responses with a status in 100..599, and the server must serve a normal request after each.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { hashPassword } from '../../src/auth/password.js';
import { request } from '../helpers/http.js';
import { until } from '../helpers/wait.js';
import { spawnPortico, type PorticoProcess } from '../security/portico-process.js';
import { junk, token, weighted } from './arbitraries.js';
import { FUZZ_MS, fuzz, testTimeout } from './budget.js';
import { Watch } from './watch.js';
import { exchange, hasFinalReply, parseReplies, withoutRefusalAfterClose } from './http1-wire.js';

/** A string as the bytes of its UTF-8 encoding, one latin1 character each. */
const utf8 = (s: string) => Buffer.from(s, 'utf8').toString('latin1');

/** Descriptors a run may leave open: the server's pooled connections to the backend. */
const SPARE_FDS = 8;

const validMethod = weighted(
  [12, fc.constantFrom('GET', 'GET', 'GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH')],
  [2, fc.constantFrom('TRACE', 'CONNECT', 'PROPFIND', 'MKCOL', 'SEARCH', 'QUERY', 'PURGE')],
);
// Node's parser knows a fixed list of methods and refuses any other token.
const oddMethod = weighted(
  [2, token()],
  [2, fc.constantFrom('get', 'GET\0', 'G ET', '', 'GET/', '\xff', 'GET:', '"GET"', 'PRI')],
  [1, junk(12)],
);

/** Pieces of a path segment: names the server has, encodings, dot segments. */
const segmentPiece = weighted(
  [10, fc.constantFrom('index.html', 'dir', 'a.txt', 'big.bin', 'old', 'new', 'api', 'private')],
  [4, fc.string({ unit: fc.constantFrom(..."abcXYZ019-._~!$&'()*+,;=:@"), maxLength: 8 })],
  [
    2,
    fc.constantFrom(
      '%2e',
      '%2E%2e',
      '%2f',
      '%2F',
      '%5c',
      '%00',
      '%0d%0a',
      '%25',
      '%c0%af',
      '%ff',
      '%e2%80%ae',
      '%20',
      '%3f',
      '%23',
    ),
  ],
  [2, fc.nat(255).map((b) => `%${b.toString(16).padStart(2, '0')}`)],
  [2, fc.constantFrom('.', '..', '...', '')],
);
/** What a target should not hold: bad percent-encodings, raw UTF-8, bytes out of place. */
const oddPiece = weighted(
  [2, fc.constantFrom('%', '%g1', '%2', '%%', '%u002e')],
  [2, fc.constantFrom('é', '€', '𝄞', '\u202e', '\ufeff').map(utf8)],
  [2, fc.constantFrom('\\', '\0', '\x7f', '\t', '"', '<', '>', '`', '{', '|', '^', '[', ']')],
  [1, junk(6)],
);
const segment = fc.array(segmentPiece, { maxLength: 3 }).map((p) => p.join(''));
const query = weighted(
  [4, fc.constant('')],
  [
    2,
    fc
      .array(fc.tuple(segment, segment), { maxLength: 3 })
      .map((q) => `?${q.map((kv) => kv.join('=')).join('&')}`),
  ],
);
const originForm = fc
  .tuple(fc.array(segment, { maxLength: 5 }), query)
  .map(([segs, q]) => `/${segs.join('/')}${q}`);
const validTarget = weighted(
  [12, originForm],
  [
    3,
    fc
      .tuple(
        fc.constantFrom('http', 'HTTP'),
        fc.constantFrom(
          'localhost',
          '127.0.0.1',
          'LOCALHOST',
          'localhost.',
          '[::1]',
          'localhost:80',
        ),
        originForm,
      )
      .map(([s, a, p]) => `${s}://${a}${p}`),
  ],
  [1, fc.constantFrom('*', 'localhost:80', 'localhost:443')],
);
const oddTarget = weighted(
  [4, fc.tuple(originForm, oddPiece, originForm).map(([a, o, b]) => `${a}${o}${b.slice(1)}`)],
  [2, fc.tuple(originForm, segment).map(([p, f]) => `${p}#${f}`)],
  [
    2,
    fc
      .tuple(
        fc.constantFrom('https', 'ftp', '', 'http:'),
        fc.constantFrom('localhost:0', 'localhost:99999', 'user:pw@localhost', '', 'a b', 'é'),
        originForm,
      )
      .map(([s, a, p]) => `${s}://${a}${p}`),
  ],
  [1, fc.constantFrom('**', '*/x', '', 'localhost', 'localhost:', '//', '///x', 'x/y')],
  [1, junk(16)],
  [1, fc.constantFrom('/a'.repeat(5000), `/${'%2e%2e/'.repeat(200)}`)],
);
const oddVersion = weighted(
  [
    3,
    fc.constantFrom(
      'HTTP/0.9',
      'HTTP/2.0',
      'HTTP/2',
      'HTTP/1.2',
      'HTTP/3',
      'http/1.1',
      'HTTP/1.1 ',
      'HTTP/1.10',
      'HTTP/01.1',
      'HTTPS/1.1',
      'HTTP/1',
      'HTTP/1.1\0',
      '',
    ),
  ],
  [1, junk(10)],
);

const oddHost = weighted(
  [
    3,
    fc.constantFrom('', 'localhost:99999', 'a b', '_', '..', 'localhost/../x', '*', 'localhost:x'),
  ],
  [1, fc.constantFrom('é.test', 'xn--').map(utf8)],
  [1, junk()],
);
const oddLength = weighted(
  [
    3,
    fc.constantFrom(
      '',
      '-1',
      '+5',
      '0x10',
      '5, 5',
      '5,6',
      '1e3',
      ' 5',
      '5 ',
      '00005',
      '99999999999999999999',
      '18446744073709551616',
      '4294967296',
    ),
  ],
  [2, fc.nat(64).map(String)],
  [1, junk(8)],
);
const oddCoding = weighted(
  [
    3,
    fc.constantFrom(
      'gzip, chunked',
      'chunked, gzip',
      'identity',
      'xchunked',
      'chunked ',
      'CHUNKED',
      'chunked;q=1',
      'chunked, chunked',
      ',chunked',
      '',
      'gzip',
      'deflate',
    ),
  ],
  [1, junk(10)],
);
const named =
  (name: string) =>
  (value: string): [string, string] => [name, value];
/** Fields a client may send, with values that fit them (if not always sensible ones). */
const validField: fc.Arbitrary<[string, string]> = fc.oneof(
  fc
    .constantFrom('close', 'keep-alive', 'upgrade', 'Upgrade, HTTP2-Settings', 'te', 'close, close')
    .map(named('Connection')),
  fc.constantFrom('websocket', 'h2c', 'h2', 'foo/1').map(named('Upgrade')),
  fc.constantFrom('100-continue', '100-Continue', 'foo', '').map(named('Expect')),
  fc
    .constantFrom(
      'gzip',
      'br',
      'gzip;q=0, *;q=1',
      'deflate',
      'identity;q=0',
      '*',
      'gzip;q=abc',
      'zstd',
    )
    .map(named('Accept-Encoding')),
  fc
    .constantFrom(
      'bytes=0-0',
      'bytes=-1',
      'bytes=5-1',
      'bytes=0-',
      `bytes=${Array.from({ length: 200 }, (_, i) => `${i}-${i}`).join(',')}`,
      'bytes=99999999999999999999-',
      'items=1-2',
      'bytes=',
      'bytes=-0',
      'bytes=1-2,,3-4',
    )
    .map(named('Range')),
  fc.constantFrom('*', '"x"', 'W/"x"', '"a", "b"', 'W/', '"').map(named('If-None-Match')),
  fc
    .constantFrom('Thu, 01 Jan 1970 00:00:00 GMT', 'Sun, 06 Nov 1994 08:49:37 GMT', 'yesterday', '')
    .map(named('If-Modified-Since')),
  fc
    .oneof(
      fc.string({ maxLength: 20 }).map((s) => `Basic ${Buffer.from(s).toString('base64')}`),
      fc.constant(`Basic ${Buffer.from('alice:secret').toString('base64')}`),
      fc.constantFrom('Basic', 'Basic !!!', 'Basic YWxpY2U=', 'Bearer x', 'basic  YTpi'),
    )
    .map(named('Authorization')),
  fc
    .constantFrom('1.2.3.4', '::1, 10.0.0.1', 'unknown', '1.2.3.4:80', '[::1]:1', ',,', '999.1.1.1')
    .map(named('X-Forwarded-For')),
  fc.constantFrom('trailers', 'gzip', 'chunked').map(named('TE')),
  fc.constantFrom('a=b', 'a=b; c=d', '=', ';;').map(named('Cookie')),
  fc.constantFrom('text/plain', 'multipart/form-data; boundary=x', '').map(named('Content-Type')),
  fc
    .tuple(
      token(),
      fc.string({ unit: fc.constantFrom(...'abc XYZ 019-.,;=/"\t'.split('')), maxLength: 30 }),
    )
    .map(([n, v]) => [n, v] as [string, string]),
);
const oddFieldName = weighted(
  [
    2,
    fc.constantFrom(
      'Host ',
      ' Host',
      'Content Length',
      'Content-Length\t',
      'X:Y',
      '',
      '(x)',
      'X\0',
      'x@y',
      '"q"',
      'Trans\xffer-Encoding',
    ),
  ],
  [1, junk(12)],
);
/** A field line that breaks the grammar somewhere, ending in its own line end. */
const oddField: fc.Arbitrary<string> = weighted(
  [
    3,
    fc
      .tuple(oddFieldName, fc.string({ maxLength: 20 }), fc.constantFrom(': ', ':', ' : ', '::'))
      .map(([n, v, sep]) => `${n}${sep}${v}\r\n`),
  ],
  [2, fc.tuple(validField, junk(40)).map(([[n], v]) => `${n}: ${v}\r\n`)],
  // obs-fold: a field continued on the next line (RFC 9112 §5.2: refuse it or replace it by SP).
  [
    2,
    fc
      .tuple(validField, fc.constantFrom(' ', '\t', '  '))
      .map(([[n, v], ws]) => `${n}: \r\n${ws}${v}\r\n`),
  ],
  [
    1,
    fc
      .tuple(validField, fc.constantFrom('\r', '\n', '\0', '\x7f'))
      .map(([[n, v], c]) => `${n}: a${c}${v}\r\n`),
  ],
  [1, fc.constant(`X-Big: ${'x'.repeat(20_000)}\r\n`)],
  [1, oddHost.map((v) => `Host: ${v}\r\n`)],
  [1, oddLength.map((v) => `Content-Length: ${v}\r\n`)],
  [1, oddCoding.map((v) => `Transfer-Encoding: ${v}\r\n`)],
);
/** Framing fields that disagree: the request smuggling shapes. */
const framing = fc.constantFrom(
  'Content-Length: 5\r\nContent-Length: 6\r\n',
  'Content-Length: 5\r\nContent-Length: 5\r\n',
  'Content-Length: 5\r\nTransfer-Encoding: chunked\r\n',
  'Transfer-Encoding: chunked\r\nContent-Length: 5\r\n',
  'Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n',
  'Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n',
  'Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n',
  'Transfer-Encoding:\r\n chunked\r\n',
  'Transfer-Encoding : chunked\r\n',
  'Transfer-Encoding: \x0bchunked\r\n',
  'Content-Length: 0\r\nContent-Length: \r\n',
  'Content-Length:\r\n 5\r\n',
  'Host: localhost\r\nHost: localhost\r\n',
  'Host: localhost\r\nHost: example.com\r\n',
);
const validBody = weighted(
  [6, fc.constant('')],
  [2, fc.string({ maxLength: 40 }).map((b) => `Content-Length: ${b.length}\r\n\r\n${b}`)],
  [1, fc.constant('Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n')],
  [1, fc.constant('\r\nGET /index.html HTTP/1.1\r\nHost: localhost\r\n\r\n')],
);

/** One change that takes a request out of the grammar. */
type Mutation =
  | ['method' | 'target' | 'version' | 'sp' | 'lead' | 'field' | 'framing' | 'body', string]
  | ['eol', string, number]
  | ['no-host' | 'no-end'];
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  oddMethod.map((v): Mutation => ['method', v]),
  oddTarget.map((v): Mutation => ['target', v]),
  oddVersion.map((v): Mutation => ['version', v]),
  fc.constantFrom('  ', '\t', '', ' \t', '\x0b').map((v): Mutation => ['sp', v]),
  fc.constantFrom('\r\n', '\r\n\r\n', ' ', '\0', '\n').map((v): Mutation => ['lead', v]),
  fc.tuple(oddField, fc.nat(12)).map(([v]): Mutation => ['field', v]),
  framing.map((v): Mutation => ['framing', v]),
  fc
    .tuple(fc.constantFrom('\n', '\r', '\r\r\n', '\n\r', '\r\n\r'), fc.nat(12))
    .map(([v, i]): Mutation => ['eol', v, i]),
  fc.constantFrom<Mutation>(['no-host'], ['no-end']),
  weighted(
    [2, junk(40)],
    [1, fc.constantFrom('hello', '5\r\nhello\r\n0\r\n\r\n', 'ffffffffffffffffff\r\n')],
  ).map((v): Mutation => ['body', v]),
);

interface Case {
  readonly bytes: string;
  /** Where the bytes are split into two writes (0: one write). */
  readonly split: number;
  readonly keepOpen: boolean;
  readonly mutated: boolean;
}

/** A request that fits the grammar, then none, one or a few mutations of it. */
const requestCase: fc.Arbitrary<Case> = fc
  .record({
    method: validMethod,
    target: validTarget,
    version: weighted([4, fc.constant('HTTP/1.1')], [1, fc.constant('HTTP/1.0')]),
    fields: fc.array(
      fc
        .tuple(validField, fc.boolean())
        .map(([[n, v], lower]) => `${lower ? n.toLowerCase() : n}: ${v}`),
      { maxLength: 8 },
    ),
    body: validBody,
    mutations: weighted<Mutation[]>(
      [6, fc.constant([])],
      [4, fc.array(mutation, { minLength: 1, maxLength: 3 })],
    ),
    split: fc.nat(64),
    keepOpen: weighted([9, fc.constant(false)], [1, fc.constant(true)]),
  })
  .map((r) => {
    const parts = {
      lead: '',
      method: r.method as string,
      sp: ' ',
      target: r.target,
      version: r.version as string,
      lines: ['Host: localhost', ...r.fields].map((l) => `${l}\r\n`),
      end: '\r\n',
      body: r.body,
    };
    for (const m of r.mutations) {
      switch (m[0]) {
        case 'field':
          parts.lines.splice(parts.lines.length >> 1, 0, m[1]);
          break;
        case 'framing':
          parts.lines.push(m[1]);
          break;
        case 'eol': {
          const i = m[2] % Math.max(1, parts.lines.length);
          parts.lines[i] = (parts.lines[i] ?? '\r\n').replace(/\r\n$/, m[1]);
          break;
        }
        case 'no-host':
          parts.lines.shift();
          break;
        case 'no-end':
          parts.end = '';
          break;
        default:
          parts[m[0]] = m[1];
      }
    }
    // A body with its own framing field takes the head's last line end.
    const body =
      parts.body.startsWith('Content-Length') || parts.body.startsWith('Transfer')
        ? parts.body
        : `${parts.end}${parts.body}`;
    return {
      bytes: `${parts.lead}${parts.method}${parts.sp}${parts.target}${parts.sp}${parts.version}\r\n${parts.lines.join('')}${body}`,
      split: r.split,
      keepOpen: r.keepOpen,
      mutated: r.mutations.length > 0,
    };
  });

describe('fuzzing HTTP/1.1 request heads', { timeout: testTimeout() }, () => {
  let server: PorticoProcess;
  let backend: http.Server;
  /** What the backend's parser refused of what Portico sent it. */
  const backendErrors: string[] = [];
  let root: string;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'portico-fuzz-heads-'));
    const www = join(root, 'www');
    mkdirSync(join(www, 'dir'), { recursive: true });
    mkdirSync(join(www, 'new'));
    writeFileSync(join(www, 'index.html'), 'the index\n');
    writeFileSync(join(www, 'dir', 'a.txt'), 'a file in a directory\n');
    writeFileSync(join(www, 'new', 'x'), 'rewritten\n');
    writeFileSync(join(www, 'big.bin'), Buffer.alloc(64 * 1024, 'compressible '));
    backend = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.end(`backend saw ${req.method} ${req.url}\n`));
    });
    backend.on('clientError', (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket) => {
      // A request Portico abandons ends in a reset or mid-message: aborted, not malformed.
      if (err.code !== 'ECONNRESET' && err.code !== 'HPE_INVALID_EOF_STATE')
        backendErrors.push(
          `${err.code ?? ''} ${err.message}: ${JSON.stringify(err.rawPacket?.toString('latin1'))}`,
        );
      socket.destroy();
    });
    backend.listen(0, '127.0.0.1');
    await once(backend, 'listening');
    const backendPort = (backend.address() as AddressInfo).port;
    const hash = await hashPassword('secret');
    server = await spawnPortico(
      `global:
  loadModules: [rproxy]
  wwwroot: ${www}
  enableCompression: true
  enableDirectoryListing: true
  enableETag: true
  customHeaders:
    X-Fuzz: "{path}"
  users:
    - name: alice
      pass: "${hash}"
  rewriteMap:
    - regex: "^/old/(.*)"
      replacement: /new/$1
  nonStandardCodes:
    - scode: 301
      url: /moved
      location: /index.html
    - scode: 401
      regex: "^/private"
      realm: fuzz
hosts:
  - domain: localhost
    locations:
      - path: /api
        proxyTo: http://127.0.0.1:${backendPort}
`,
    );
  });

  after(async () => {
    await server?.stop();
    backend?.closeAllConnections();
    backend?.close();
    rmSync(root, { recursive: true, force: true });
  });

  const statuses = new Map<number, number>();

  it(`answers every head with nothing or well-formed responses (${FUZZ_MS / 1000} s)`, async (t) => {
    const baseFds = server.fds();
    const watch = new Watch(server);
    await fuzz(
      t,
      fc.asyncProperty(requestCase, (c) =>
        watch.run(c, async () => {
          const { bytes, split, keepOpen } = c;
          const all = Buffer.from(bytes, 'latin1');
          const at = Math.min(split, all.length);
          const pieces = at > 0 ? [all.subarray(0, at), all.subarray(at)] : [all];
          const head = /(^|\n)\s*HEAD/.test(bytes);
          const { data, reset, timedOut } = await exchange(server.port, pieces, {
            endAfterMs: keepOpen ? Infinity : 0,
            enough: (d) => keepOpen && hasFinalReply(d, head),
            ms: keepOpen ? 1000 : 5000,
          });
          const replies = parseReplies(withoutRefusalAfterClose(data), {
            head,
            cut: reset || timedOut,
          });
          assert.ok(data.length === 0 || replies.length > 0);
          assert.deepEqual(backendErrors, []);
          for (const r of replies) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
          // Nothing here can fail inside: a 500 is an exception the pipeline did not expect.
          assert.ok(
            replies.every((r) => r.status !== 500),
            `a 500; the error log ends:\n${server.stderr().slice(-2000)}`,
          );
          const normal = await request(server.port, '/index.html', {
            headers: { Host: 'localhost' },
          });
          assert.equal(normal.status, 200);
          assert.equal(normal.text, 'the index\n');
        }),
      ),
    );
    t.diagnostic(
      `statuses: ${[...statuses]
        .sort(([a], [b]) => a - b)
        .map(([s, n]) => `${s}×${n}`)
        .join(' ')}`,
    );
    watch.assertAlive();
    // Every connection of the run was closed: the server holds what it held before it (and its
    // pooled connections to the backend).
    const fds = await until(() => server.fds(), {
      ok: (n) => n <= baseFds + SPARE_FDS,
      what: `descriptors back to ${baseFds} (+${SPARE_FDS})`,
    });
    t.diagnostic(`descriptors: ${baseFds} before, ${fds} after`);
  });
});
