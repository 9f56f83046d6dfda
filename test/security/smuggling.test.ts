// Request smuggling over HTTP/1.1: every head whose framing two parsers could read differently
// (Content-Length with Transfer-Encoding, Content-Lengths that disagree, obfuscated codings,
// folded lines, bare LF, control characters) is refused with a 400 and its connection closed
// before anything reaches the backend; a malformed chunked body is refused without what follows
// it reaching the backend as a request; a body that carries a request reaches the backend as the
// body of one request. A refusal never mixes into a response under way, and never keeps the
// connection. Portico runs in a process of its own, judged by what each attack leaves of it.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { request } from '../helpers/http.js';
import { assertRecovered, baseline, exchange, statusLines, type Baseline } from './harness.js';
import { until } from '../helpers/wait.js';
import { spawnPortico, type PorticoProcess } from './portico-process.js';

const BAD_REQUEST =
  'HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\nServer: Portico\r\n\r\n';
// What an attacker hopes a second parser reads as a request of its own.
const SMUGGLED = 'GET /proxy/admin HTTP/1.1\r\nHost: localhost\r\n\r\n';

interface Seen {
  method: string;
  url: string;
  body: string;
  /** The body did not arrive whole: the client's connection to Portico was refused under it. */
  aborted: boolean;
}

const seen: Seen[] = [];
const HALF = 64 * 1024;
const held: ServerResponse[] = [];
let backend: Server;
let p: PorticoProcess;
let base: Baseline;

before(async () => {
  backend = createServer((req, res) => {
    let body = '';
    req.setEncoding('latin1').on('data', (d: string) => (body += d));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', body, aborted: false });
      if (req.url !== '/proxy/held') return void res.end('backend');
      // Half of its body now, the rest when the test releases it.
      res.writeHead(200, { 'content-length': 2 * HALF });
      res.write(Buffer.alloc(HALF, 97));
      held.push(res);
    });
    req.on('aborted', () =>
      seen.push({ method: req.method ?? '', url: req.url ?? '', body, aborted: true }),
    );
  });
  backend.listen(0, '127.0.0.1');
  await once(backend, 'listening');
  const { port } = backend.address() as AddressInfo;
  p = await spawnPortico(
    `global:
  wwwroot: www
  loadModules: [rproxy]
hosts:
  - domain: localhost
    locations:
      - path: /proxy
        proxyTo: http://127.0.0.1:${port}
`,
    { files: { 'www/index.html': 'hello' } },
  );
  base = await baseline(p, assertServed);
});

after(async () => {
  await p?.stop();
  backend?.closeAllConnections();
  backend?.close();
});

/**
 * Another client, static and proxied, is answered as usual. Then the backend closes its
 * connections, all idle by then: Portico's pool keeps those it opened for seconds (for a request
 * whose body turned out malformed before anything was sent on it too), within its bound, and they
 * are not what an attack is judged by.
 */
async function assertServed(): Promise<void> {
  const file = await request(p.port, '/index.html');
  assert.deepEqual([file.status, file.text], [200, 'hello']);
  const proxied = await request(p.port, '/proxy/ok', { headers: { host: 'localhost' } });
  assert.deepEqual([proxied.status, proxied.text], [200, 'backend']);
  backend.closeAllConnections();
}

/** Each head is answered with one 400 and its connection closed. */
async function assertRefused(heads: Record<string, string>): Promise<void> {
  for (const [name, bytes] of Object.entries(heads)) {
    const answer = await exchange(p.port, bytes);
    assert.equal(answer.data, BAD_REQUEST, name);
    assert.ok(answer.closed, `${name}: the connection was left open`);
  }
}

const post = (fields: string, body: string) =>
  `POST /proxy/up HTTP/1.1\r\nHost: localhost\r\n${fields}\r\n\r\n${body}`;

describe('request smuggling over HTTP/1.1', () => {
  it('refuses Content-Length with Transfer-Encoding, and Content-Lengths that are not one number', async (t) => {
    seen.length = 0;
    await assertRefused({
      'CL then TE': post(
        `Content-Length: ${5 + SMUGGLED.length}\r\nTransfer-Encoding: chunked`,
        `0\r\n\r\n${SMUGGLED}`,
      ),
      // The chunk's size line is the 4 bytes a Content-Length reader would take for the body.
      'TE then CL': post(
        'Transfer-Encoding: chunked\r\nContent-Length: 4',
        `${SMUGGLED.length.toString(16)}\r\n${SMUGGLED}\r\n0\r\n\r\n`,
      ),
      'two Content-Lengths that differ': post(
        `Content-Length: 5\r\nContent-Length: ${5 + SMUGGLED.length}`,
        `hello${SMUGGLED}`,
      ),
      'two equal Content-Lengths': post('Content-Length: 5\r\nContent-Length: 5', 'hello'),
      'a Content-Length list': post(
        `Content-Length: 5, ${5 + SMUGGLED.length}`,
        `hello${SMUGGLED}`,
      ),
      'a signed Content-Length': post('Content-Length: +5', 'hello'),
      'a negative Content-Length': post('Content-Length: -1', 'hello'),
      'a hexadecimal Content-Length': post('Content-Length: 0x5', 'hello'),
      'a Content-Length with a suffix': post('Content-Length: 5a', 'hello'),
      'a Content-Length beyond 64 bits': post('Content-Length: 99999999999999999999', 'hello'),
    });
    assert.deepEqual(seen, [], 'nothing reached the backend');
    await assertServed();
    await assertRecovered(t, p, base);
  });

  it('refuses obfuscated Transfer-Encoding', async (t) => {
    seen.length = 0;
    const chunked = `0\r\n\r\n${SMUGGLED}`;
    await assertRefused({
      'chunked, identity': post('Transfer-Encoding: chunked, identity', chunked),
      'chunked then a comma': post('Transfer-Encoding: chunked,', chunked),
      xchunked: post('Transfer-Encoding: xchunked', chunked),
      chunkedx: post('Transfer-Encoding: chunkedx', chunked),
      'quoted chunked': post('Transfer-Encoding: "chunked"', chunked),
      'chunked with a parameter': post('Transfer-Encoding: chunked;q=1', chunked),
      'identity alone': post('Transfer-Encoding: identity', chunked),
      'two Transfer-Encoding fields': post(
        'Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked',
        chunked,
      ),
      'a space before the colon': post('Transfer-Encoding : chunked', chunked),
      'a tab before the colon': post('Transfer-Encoding\t: chunked', chunked),
      'a vertical tab before the value': post('Transfer-Encoding: \x0bchunked', chunked),
      'chunked folded onto identity': post('Transfer-Encoding: identity\r\n chunked', chunked),
    });
    assert.deepEqual(seen, [], 'nothing reached the backend');
    await assertServed();
    await assertRecovered(t, p, base);
  });

  it('refuses folded lines, bare LF line ends and control characters in the head', async (t) => {
    seen.length = 0;
    await assertRefused({
      'obs-fold with a space': 'GET /proxy/a HTTP/1.1\r\nHost: localhost\r\nX-A: a\r\n b\r\n\r\n',
      'obs-fold with a tab': 'GET /proxy/a HTTP/1.1\r\nHost: localhost\r\nX-A: a\r\n\tb\r\n\r\n',
      'a field line starting with a space':
        'GET /proxy/a HTTP/1.1\r\nHost: localhost\r\n X-A: b\r\n\r\n',
      'bare LF everywhere': 'GET /proxy/a HTTP/1.1\nHost: localhost\n\n',
      'bare LF after one field': 'GET /proxy/a HTTP/1.1\r\nHost: localhost\nX-A: b\r\n\r\n',
      'NUL in a value': 'GET /proxy/a HTTP/1.1\r\nHost: localhost\r\nX-A: a\0b\r\n\r\n',
      'CR in a value': 'GET /proxy/a HTTP/1.1\r\nHost: localhost\r\nX-A: a\rX-B: b\r\n\r\n',
      'DEL in a value': 'GET /proxy/a HTTP/1.1\r\nHost: localhost\r\nX-A: a\x7fb\r\n\r\n',
      'a control character in a name':
        'GET /proxy/a HTTP/1.1\r\nHost: localhost\r\nX-\x01: a\r\n\r\n',
      'a space in a name': 'GET /proxy/a HTTP/1.1\r\nHost: localhost\r\nX A: b\r\n\r\n',
      'CR in the request target': 'GET /proxy/a\rb HTTP/1.1\r\nHost: localhost\r\n\r\n',
      'NUL in the method': 'G\0T /proxy/a HTTP/1.1\r\nHost: localhost\r\n\r\n',
    });
    assert.deepEqual(seen, [], 'nothing reached the backend');
    await assertServed();
    await assertRecovered(t, p, base);
  });

  it('refuses malformed chunked bodies without a second request reaching the backend', async (t) => {
    seen.length = 0;
    await assertRefused({
      'bare LF in the chunks': post('Transfer-Encoding: chunked', `1\na\n0\n\n${SMUGGLED}`),
      'a chunk size beyond 64 bits': post(
        'Transfer-Encoding: chunked',
        `fffffffffffffffff1\r\na\r\n0\r\n\r\n${SMUGGLED}`,
      ),
      'LF inside a chunk extension': post(
        'Transfer-Encoding: chunked',
        `1;a\nb\r\na\r\n0\r\n\r\n${SMUGGLED}`,
      ),
      'chunk data longer than its size': post(
        'Transfer-Encoding: chunked',
        `1\r\nab0\r\n\r\n${SMUGGLED}`,
      ),
    });
    // Portico may have begun forwarding the head before the body turned out malformed: the backend
    // then sees that one request cut short, never the request hidden after it.
    assert.deepEqual(
      seen.filter((s) => !s.aborted),
      [],
      'no request completed at the backend',
    );
    assert.ok(
      !seen.some((s) => s.url === '/proxy/admin'),
      'the hidden request reached the backend',
    );
    await assertServed();
    await assertRecovered(t, p, base);
  });

  it('forwards a body that carries a request as the body of one request', async (t) => {
    seen.length = 0;
    const length = await exchange(
      p.port,
      post(`Content-Length: ${SMUGGLED.length}\r\nConnection: close`, SMUGGLED),
    );
    assert.deepEqual(statusLines(length.data), ['HTTP/1.1 200 OK']);
    // Whitespace around the coding is optional whitespace, and the coding's case does not matter:
    // chunked it is, and the backend gets the chunk's bytes as the body.
    const chunk = `${SMUGGLED.length.toString(16)}\r\n${SMUGGLED}\r\n0\r\n\r\n`;
    for (const coding of ['  chunked', '\tchunked', 'chunked ', 'CHUNKED']) {
      const answer = await exchange(
        p.port,
        post(`Transfer-Encoding:${coding}\r\nConnection: close`, chunk),
      );
      assert.deepEqual(statusLines(answer.data), ['HTTP/1.1 200 OK'], JSON.stringify(coding));
    }
    assert.deepEqual(
      seen,
      Array.from({ length: 5 }, () => ({
        method: 'POST',
        url: '/proxy/up',
        body: SMUGGLED,
        aborted: false,
      })),
    );
    await assertServed();
    await assertRecovered(t, p, base);
  });

  it('never writes a refusal into the body of a response under way', async (t) => {
    // A malformed request pipelined behind a response whose body is still coming: the connection
    // must carry that body unmixed, and a 400 only once it is whole, if at all.
    const socket = connect(p.port, '127.0.0.1');
    let received = Buffer.alloc(0);
    socket.on('data', (d: Buffer) => (received = Buffer.concat([received, d])));
    socket.on('error', () => undefined);
    let closed = false;
    socket.on('close', () => (closed = true));
    const bodyOf = () => {
      const head = received.indexOf('\r\n\r\n');
      return head < 0 ? Buffer.alloc(0) : received.subarray(head + 4);
    };
    try {
      await once(socket, 'connect');
      socket.write('GET /proxy/held HTTP/1.1\r\nHost: localhost\r\n\r\n');
      await until(() => bodyOf().length, { ok: (n) => n >= HALF, what: 'the first half' });
      socket.write('GET / HTTP/1.1\r\nHost: x\r\nX-A: a\0b\r\n\r\n');
      // Nothing announces that the server has read the bad request: a second is ample on loopback.
      await until(() => received.length, { ok: (n) => n > HALF + 500 || closed, ms: 1000 }).catch(
        () => undefined,
      );
      held.splice(0).forEach((res) => res.end(Buffer.alloc(HALF, 97)));
      await until(() => closed || bodyOf().length >= 2 * HALF, {
        what: 'the whole body or a close',
      });
    } finally {
      socket.destroy();
    }
    assert.match(received.toString('latin1'), /^HTTP\/1\.1 200 OK\r\n/);
    const body = bodyOf();
    const file = body.subarray(0, 2 * HALF);
    const foreign = file.findIndex((byte) => byte !== 97);
    assert.equal(
      foreign,
      -1,
      `foreign bytes at ${foreign} of the body: ${JSON.stringify(file.subarray(foreign, foreign + 40).toString('latin1'))}`,
    );
    assert.ok(
      ['', BAD_REQUEST].includes(body.subarray(2 * HALF).toString('latin1')),
      'only a 400 may follow the whole body',
    );
    await assertServed();
    await assertRecovered(t, p, base);
  });

  it('lets go of a refused connection whose client never closes its end', async (t) => {
    // After its 400 the server has nothing more to say or hear on the connection: a client that
    // keeps its half open must not keep the server's descriptor (for the 5-minute request limit).
    const clients = Array.from({ length: 20 }, () =>
      connect({ port: p.port, host: '127.0.0.1', allowHalfOpen: true }),
    );
    try {
      const answers = await Promise.all(
        clients.map(
          (socket) =>
            new Promise<string>((resolve) => {
              let data = '';
              socket.on('error', () => resolve(data));
              socket.setEncoding('latin1').on('data', (d: string) => (data += d));
              socket.on('end', () => resolve(data));
              socket.write('GET / HTTP/1.1\r\nHost: x\r\nX-A: a\0b\r\n\r\n');
            }),
        ),
      );
      for (const answer of answers) assert.equal(answer, BAD_REQUEST);
      await assertServed();
      await assertRecovered(t, p, base, 3000);
    } finally {
      for (const socket of clients) socket.destroy();
    }
  });
});
