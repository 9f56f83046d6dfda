// nonStandardCodes with a status that has no content (204, 205, 304: RFC 9110 §6.4.1, §15.3.6) go
// through the error flow as any other code (REFERENCE §6), but neither the default page, an
// errorPages file nor an errorConfig's page is sent with them, over HTTP/1.1 and HTTP/2: no body,
// no Content-Type, no Content-Length on a 204 or 304, `Content-Length: 0` on a 205. A body after
// one of them would be read as the start of the next response on a keep-alive connection.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import {
  connect as http2Connect,
  type ClientHttp2Session,
  type IncomingHttpHeaders,
} from 'node:http2';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort, startServer, type RunningServer } from '../helpers/server.js';
import { SERVER_CERT, SERVER_KEY, TEST_CA } from '../helpers/tls.js';

const root = mkdtempSync(join(tmpdir(), 'portico-bodyless-'));
const www = join(root, 'www');
const pages = join(root, 'pages');
mkdirSync(www);
mkdirSync(pages);
writeFileSync(join(www, 'hello.txt'), 'hello after');
writeFileSync(join(pages, 'page.html'), '<p>PAGE FOR A BODYLESS STATUS</p>');
// Past the file cache's 1 MiB: streamed from disk, the other way a body leaves.
writeFileSync(join(pages, 'large.html'), Buffer.alloc(2 * 1024 * 1024, 'x'));

const errorConfig = (scode: number, page: string) => `
      - scode: ${scode}
        wwwroot: ${pages}
        customHeaders:
          X-Page: "${page}"
        rewriteMap:
          - regex: ".*"
            replacement: /${page}`;

let s: RunningServer;
let sport: number;
before(async () => {
  sport = await freePort();
  s = await startServer(`
global:
  sport: "127.0.0.1:${sport}"
  secure: true
  disableToHTTPSRedirect: true
  cert: ${SERVER_CERT}
  key: ${SERVER_KEY}
  wwwroot: ${www}
  nonStandardCodes:
    - scode: 204
      url: /s204
    - scode: 205
      url: /s205
    - scode: 304
      url: /s304
  errorPages:
    - scode: 204
      path: ${join(pages, 'page.html')}
    - scode: 205
      path: ${join(pages, 'page.html')}
    - scode: 304
      path: ${join(pages, 'page.html')}
hosts:
  - domain: ec.test
    wwwroot: ${www}
    errorConfig:${errorConfig(204, 'page.html')}${errorConfig(205, 'large.html')}${errorConfig(304, 'page.html')}
`);
});
after(async () => {
  await s.close();
  rmSync(root, { recursive: true, force: true });
});

interface Parsed {
  status: number;
  headers: Map<string, string>;
  body: string;
}

/**
 * Sends `requests` pipelined on one connection and reads until the server closes it (the last
 * request says `Connection: close`), then splits the bytes as a client must: no content after a
 * HEAD, 1xx, 204 or 304 (RFC 9112 §6.3), and a 205's by its Content-Length, which must be there.
 */
function pipelined(
  requests: readonly { method: string; path: string; host?: string }[],
): Promise<Parsed[]> {
  const bytes = requests
    .map(
      (r, i) =>
        `${r.method} ${r.path} HTTP/1.1\r\nHost: ${r.host ?? 'localhost'}\r\n${i === requests.length - 1 ? 'Connection: close\r\n' : ''}\r\n`,
    )
    .join('');
  return new Promise((resolve, reject) => {
    const socket = connect(s.port, '127.0.0.1', () => socket.write(bytes));
    let data = '';
    const timer = setTimeout(
      () => socket.destroy(new Error('the server did not close the connection')),
      5000,
    );
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => (data += d));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      try {
        resolve(split(data, requests));
      } catch (e) {
        reject(e as Error);
      }
    });
  });
}

function split(data: string, requests: readonly { method: string }[]): Parsed[] {
  const out: Parsed[] = [];
  let at = 0;
  for (const r of requests) {
    const end = data.indexOf('\r\n\r\n', at);
    assert.ok(
      end >= 0,
      `no head for response ${out.length + 1} in ${JSON.stringify(data.slice(at, at + 200))}`,
    );
    const [statusLine, ...lines] = data.slice(at, end).split('\r\n');
    assert.match(
      statusLine!,
      /^HTTP\/1\.1 \d{3} /,
      `response ${out.length + 1} starts with ${JSON.stringify(statusLine)}`,
    );
    const status = Number(statusLine!.slice(9, 12));
    const headers = new Map(
      lines.map((l) => [
        l.slice(0, l.indexOf(':')).toLowerCase(),
        l.slice(l.indexOf(':') + 1).trim(),
      ]),
    );
    const noContent = r.method === 'HEAD' || status < 200 || status === 204 || status === 304;
    const length = noContent ? 0 : Number(headers.get('content-length'));
    assert.ok(
      Number.isInteger(length),
      `response ${out.length + 1} (${status}) has no Content-Length`,
    );
    out.push({ status, headers, body: data.slice(end + 4, end + 4 + length) });
    at = end + 4 + length;
  }
  assert.equal(data.slice(at), '', 'nothing follows the last response');
  return out;
}

function assertNoContent(
  r: { status: number; headers: Map<string, string> | IncomingHttpHeaders; body: string },
  status: number,
  what: string,
): void {
  const get = (name: string) =>
    r.headers instanceof Map ? r.headers.get(name) : (r.headers[name] as string | undefined);
  assert.equal(r.status, status, what);
  assert.equal(r.body, '', what);
  assert.equal(get('content-type'), undefined, what);
  assert.equal(get('transfer-encoding'), undefined, what);
  assert.equal(get('content-length'), status === 205 ? '0' : undefined, what);
  assert.equal(get('server'), 'Portico', what);
}

describe('statuses without content over HTTP/1.1', () => {
  it('nonStandardCodes 204, 205 and 304 send no page, and the keep-alive connection serves the next request', async () => {
    const requests = ['/s204', '/s205', '/s304'].flatMap((path) => [
      { method: 'GET', path },
      { method: 'HEAD', path },
    ]);
    const replies = await pipelined([...requests, { method: 'GET', path: '/hello.txt' }]);
    for (const [i, r] of requests.entries())
      assertNoContent(replies[i]!, Number(r.path.slice(2)), `${r.method} ${r.path}`);
    assert.deepEqual([replies.at(-1)!.status, replies.at(-1)!.body], [200, 'hello after']);
    // The errorPages files were not even read: nothing to send them in.
    assert.doesNotMatch(s.stderr(), /error page/i);
  });

  it('an errorConfig for such a status re-runs the chain, keeps its headers and drops its page, cached or streamed', async () => {
    const requests = ['/s204', '/s205', '/s304'].flatMap((path) => [
      { method: 'GET', path, host: 'ec.test' },
      { method: 'HEAD', path, host: 'ec.test' },
    ]);
    const replies = await pipelined([
      ...requests,
      { method: 'GET', path: '/hello.txt', host: 'ec.test' },
    ]);
    for (const [i, r] of requests.entries()) {
      const what = `${r.method} ${r.path} on ec.test`;
      assertNoContent(replies[i]!, Number(r.path.slice(2)), what);
      assert.equal(
        replies[i]!.headers.get('x-page'),
        r.path === '/s205' ? 'large.html' : 'page.html',
        what,
      );
    }
    assert.deepEqual([replies.at(-1)!.status, replies.at(-1)!.body], [200, 'hello after']);
  });
});

describe('statuses without content over HTTP/2', () => {
  let session: ClientHttp2Session;
  before(() => {
    session = http2Connect(`https://localhost:${sport}`, {
      ca: TEST_CA,
      host: '127.0.0.1',
    } as never);
  });
  after(() => session.close());

  const fetch2 = (headers: Record<string, string>) =>
    new Promise<{ status: number; headers: IncomingHttpHeaders; body: string }>(
      (resolve, reject) => {
        const stream = session.request(headers, { endStream: true });
        const chunks: Buffer[] = [];
        let head: IncomingHttpHeaders = {};
        stream.on('response', (h) => (head = h));
        stream.on('data', (d: Buffer) => chunks.push(d));
        stream.on('end', () =>
          resolve({
            status: Number(head[':status']),
            headers: head,
            body: Buffer.concat(chunks).toString(),
          }),
        );
        stream.on('error', reject);
      },
    );

  it('sends 204, 205 and 304 without content, for the default page and an errorConfig, and the session goes on', async () => {
    for (const authority of ['localhost', 'ec.test']) {
      for (const path of ['/s204', '/s205', '/s304']) {
        for (const method of ['GET', 'HEAD']) {
          const r = await fetch2({ ':path': path, ':method': method, ':authority': authority });
          const what = `${method} ${path} on ${authority}`;
          assertNoContent(r, Number(path.slice(2)), what);
          if (authority === 'ec.test')
            assert.equal(r.headers['x-page'], path === '/s205' ? 'large.html' : 'page.html', what);
        }
      }
    }
    const next = await fetch2({ ':path': '/hello.txt' });
    assert.deepEqual([next.status, next.body], [200, 'hello after']);
  });
});
