// Edges of the request path, end to end with a real server and real clients: the compression
// threshold, what the default error pages show, errorConfig pages under conditional and Range
// requests, HTTP/2 responses (connection-specific headers, clients that vanish mid-download), what
// `{path}` is on a sanitizer error, which Host headers are accepted or required, which host an
// absolute-form request is for, the blocklist answering before anything else, CONNECT.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { connect as http2Connect, type IncomingHttpHeaders } from 'node:http2';
import { tmpdir } from 'node:os';
import { connect as tlsConnect } from 'node:tls';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { loadConfigText } from '../../src/config/load.js';
import { Server } from '../../src/server/server.js';
import { raw, request } from '../helpers/http.js';
import { freePort, startServer, type RunningServer } from '../helpers/server.js';
import { h2TlsOptions, SERVER_CERT, SERVER_KEY, TEST_CA } from '../helpers/tls.js';
import { logged, until } from '../helpers/wait.js';

const root = mkdtempSync(join(tmpdir(), 'portico-edges-'));
const www = join(root, 'www');
mkdirSync(www, { recursive: true });
writeFileSync(join(www, '256.txt'), 'x'.repeat(256));
writeFileSync(join(www, '257.txt'), 'x'.repeat(257));
mkdirSync(join(www, 'sub'));
writeFileSync(join(www, 'sub', 'a.txt'), 'protected');
const errroot = join(root, 'errroot');
mkdirSync(errroot);
writeFileSync(join(errroot, '404.html'), '<p>custom 404 page</p>');
writeFileSync(join(errroot, 'any.html'), '<p>please sign in</p>');
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
    assert.equal(
      (await request(s.port, '/257.txt', { headers })).headers['content-encoding'],
      'gzip',
    );
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
    for (const [path, status] of [
      ['/missing', 404],
      ['/busy', 503],
    ] as const) {
      const r = await request(s.port, path);
      assert.equal(r.status, status);
      assert.doesNotMatch(r.text, /ops@example\.com/, path);
    }
    const put = await request(s.port, '/', { method: 'PUT' });
    assert.equal(put.status, 405);
    assert.doesNotMatch(put.text, /ops@example\.com/);
  });
});

describe('an errorConfig page keeps the error status under conditional and Range requests', () => {
  let s: RunningServer;
  before(async () => {
    s = await startServer(`
global:
  wwwroot: ${www}
hosts:
  - domain: ec.test
    nonStandardCodes:
      - scode: 401
        url: /sub/a.txt
        disableBruteProtection: true
    errorConfig:
      - scode: 404
        wwwroot: ${errroot}
        rewriteMap:
          - regex: ".*"
            replacement: /404.html
      - scode: 401
        wwwroot: ${errroot}
        rewriteMap:
          - regex: ".*"
            replacement: /any.html
`);
  });
  after(() => s.close());

  const future = new Date(Date.now() + 86_400_000).toUTCString();
  const get = (path: string, headers: Record<string, string>) =>
    request(s.port, path, { headers: { host: 'ec.test', ...headers } });
  // The page file's validators would invite a client to revalidate an error.
  const assertErrorPage = (
    r: Awaited<ReturnType<typeof get>>,
    status: number,
    body: string,
    label: string,
  ) => {
    assert.equal(r.status, status, label);
    assert.equal(r.text, body, label);
    for (const name of ['etag', 'last-modified', 'content-range', 'accept-ranges'])
      assert.equal(r.headers[name], undefined, `${label}: ${name}`);
  };

  it('a 401 stays 401 with its challenge whatever the preconditions', async () => {
    const cases: Record<string, string>[] = [
      { 'if-modified-since': future },
      { 'if-none-match': '*' },
      { 'if-match': '"nope"' },
      { 'if-unmodified-since': 'Thu, 01 Jan 1970 00:00:00 GMT' },
    ];
    for (const headers of cases) {
      const r = await get('/sub/a.txt', headers);
      assertErrorPage(r, 401, '<p>please sign in</p>', JSON.stringify(headers));
      assert.match(String(r.headers['www-authenticate']), /^Basic realm=/);
    }
  });

  it('a 404 stays 404 with the whole page whatever the preconditions or ranges', async () => {
    const cases: Record<string, string>[] = [
      { 'if-modified-since': future },
      { 'if-none-match': '*' },
      { range: 'bytes=0-3' },
      { range: 'bytes=0-1,5-6' },
      { range: 'bytes=9999-' },
    ];
    for (const headers of cases) {
      const r = await get('/missing.html', headers);
      assertErrorPage(r, 404, '<p>custom 404 page</p>', JSON.stringify(headers));
      assert.match(String(r.headers['content-type']), /^text\/html/);
    }
  });
});

describe('HTTP/2 responses', () => {
  const errors = new PassThrough();
  let errorLog = '';
  let server: Server;
  let sport: number;
  before(async () => {
    sport = await freePort();
    const yaml = `global:\n  port: "127.0.0.1:${await freePort()}"\n  sport: "127.0.0.1:${sport}"\n  secure: true\n  cert: ${SERVER_CERT}\n  key: ${SERVER_KEY}\n  wwwroot: ${www}\n`;
    const { config } = loadConfigText(yaml, 'yaml', 'h2.yaml');
    // Validation refuses these names in customHeaders; set past it, they stand for any header a
    // stage or module might add. Each one alone used to make Node reset every HTTP/2 stream.
    config!.global.customHeaders = {
      Connection: 'close',
      'Keep-Alive': 'timeout=5',
      'Proxy-Connection': 'keep-alive',
      'Transfer-Encoding': 'chunked',
      Upgrade: 'h2c',
      TE: 'gzip',
      'X-Kept': 'yes',
    };
    errors.on('data', (d: Buffer) => (errorLog += d.toString()));
    server = await Server.start(config!, { stderr: errors });
  });
  after(() => server.stop());

  function h2get(path: string): Promise<{ headers: IncomingHttpHeaders; body: string }> {
    return new Promise((resolve, reject) => {
      const session = http2Connect(`https://127.0.0.1:${sport}`, {
        ca: TEST_CA,
        servername: 'localhost',
      });
      session.on('error', reject);
      const stream = session.request({ ':path': path });
      let body = '';
      let headers: IncomingHttpHeaders = {};
      stream.setEncoding('utf8');
      stream.on('response', (h) => (headers = h));
      stream.on('data', (d: string) => (body += d));
      stream.on('error', reject);
      stream.on('end', () => {
        session.close();
        resolve({ headers, body });
      });
    });
  }

  it('never carry connection-specific headers, on files and error pages alike; other headers stay', async () => {
    for (const [path, status] of [
      ['/256.txt', 200],
      ['/missing', 404],
    ] as const) {
      const r = await h2get(path);
      assert.equal(r.headers[':status'], status, path);
      assert.equal(r.headers['x-kept'], 'yes', path);
      for (const name of [
        'connection',
        'keep-alive',
        'proxy-connection',
        'transfer-encoding',
        'upgrade',
        'te',
      ])
        assert.equal(r.headers[name], undefined, `${path}: ${name}`);
    }
    assert.equal((await h2get('/256.txt')).body, 'x'.repeat(256));
  });

  it('a client that goes away mid-download is not a server error', async () => {
    // Larger than every buffer between the two ends, so the server is still writing (sparse: no disk).
    writeFileSync(join(www, 'huge.bin'), '');
    truncateSync(join(www, 'huge.bin'), 64 * 1024 * 1024);
    // The connection is dropped under the session, as when a client dies: no GOAWAY, no RST_STREAM.
    const socket = tlsConnect(h2TlsOptions(sport));
    const session = http2Connect(`https://127.0.0.1:${sport}`, { createConnection: () => socket });
    session.on('error', () => {});
    const stream = session.request({ ':path': '/huge.bin' });
    stream.on('error', () => {});
    await new Promise((resolve) => stream.once('data', resolve));
    socket.destroy();
    // An error would be logged as the server lets the connection go.
    await until(() => server.connectionsActive === 0, { what: 'the connection gone' });
    assert.doesNotMatch(errorLog, /Unexpected error/);
  });
});

describe('customHeaders {path} on the sanitizer 400', () => {
  let s: RunningServer;
  before(async () => {
    s = await startServer(`global:\n  wwwroot: ${www}\n  customHeaders:\n    X-Path: "p={path}"\n`);
  });
  after(() => s.close());

  it('is the raw path (the sanitized one does not exist)', async () => {
    const reply = await raw(
      s.port,
      'GET /a/../%zz/b?q=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    assert.match(reply, /^HTTP\/1\.1 400 /);
    assert.match(reply, /\r\nX-Path: p=\/a\/\.\.\/%zz\/b\r\n/);
    assert.equal(
      (await request(s.port, '/a/../256.txt')).headers['x-path'],
      'p=/256.txt',
      'a sanitized path as usual',
    );
  });
});

describe('Host header syntax', () => {
  let s: RunningServer;
  before(async () => {
    s = await startServer(`
global:
  wwwroot: ${www}
hosts:
  - domain: example.org
    wwwroot: ${www}
    wwwredirect: true
`);
  });
  after(() => s.close());

  const get = (host: string) =>
    raw(s.port, `GET /p?q=1 HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);

  it('refuses a port that is not digits, or a host that is not a name or an address, with 400', async () => {
    for (const host of [
      'example.org:@evil.com',
      'example.org:80@evil.com',
      'example.org:8o',
      'example.org/evil',
      'user@example.org',
      '[::1',
      'example.org:80:80',
      'a b',
    ]) {
      const reply = await get(host);
      assert.match(reply, /^HTTP\/1\.1 400 /, host);
      assert.doesNotMatch(reply, /\r\nLocation:/i, host);
    }
  });

  it('redirects a valid name with its numeric port kept', async () => {
    assert.match(
      await get('example.org:8080'),
      /\r\nLocation: http:\/\/www\.example\.org:8080\/p\?q=1\r\n/,
    );
    assert.match(await get('EXAMPLE.org'), /\r\nLocation: http:\/\/www\.example\.org\/p\?q=1\r\n/);
    for (const host of [
      '127.0.0.1:1',
      '[::1]:8080',
      '[::1]',
      'xn--caf-dma.example',
      'under_score.test',
      '',
    ])
      assert.match(await get(host), /^HTTP\/1\.1 404 /, JSON.stringify(host));
  });
});

describe('absolute-form request targets', () => {
  const dirs = { a: join(root, 'abs-a'), b: join(root, 'abs-b') };
  let s: RunningServer;
  before(async () => {
    for (const [name, dir] of Object.entries(dirs)) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'text.txt'), `host ${name}`);
    }
    s = await startServer(`
global:
  wwwroot: ${www}
hosts:
  - domain: a.test
    wwwroot: ${dirs.a}
  - domain: b.test
    wwwroot: ${dirs.b}
  - domain: example.org
    wwwroot: ${www}
    wwwredirect: true
`);
  });
  after(() => s.close());

  const send = (target: string, host = 'a.test') =>
    raw(s.port, `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);

  it('route by the target’s authority, not by Host (RFC 9112 §3.2.2)', async () => {
    assert.match(await send('http://b.test/text.txt'), /\r\n\r\nhost b$/);
    assert.match(await send('http://B.TEST:8080/text.txt?x=1'), /\r\n\r\nhost b$/);
    assert.match(await send('/text.txt', 'b.test'), /\r\n\r\nhost b$/);
    assert.match(await send('http://a.test/text.txt', 'b.test'), /\r\n\r\nhost a$/);
  });

  it('build redirects from the target’s authority', async () => {
    assert.match(
      await send('http://example.org:8080/p?q=1'),
      /\r\nLocation: http:\/\/www\.example\.org:8080\/p\?q=1\r\n/,
    );
    assert.match(
      await send('http://example.org'),
      /\r\nLocation: http:\/\/www\.example\.org\/\r\n/,
    );
  });

  it('refuse an authority with user information, an empty one or an invalid port with 400', async () => {
    for (const target of [
      'http://user@b.test/text.txt',
      'http:///text.txt',
      'http://b.test:x/text.txt',
      'ftp://b.test/text.txt',
    ]) {
      assert.match(await send(target), /^HTTP\/1\.1 400 /, target);
    }
  });

  it('sanitize the absolute form’s path like any other', async () => {
    assert.match(await send('http://b.test/x/../text.txt'), /\r\n\r\nhost b$/);
    assert.match(await send('http://b.test/%zz'), /^HTTP\/1\.1 400 /);
  });
});

describe('requests without Host, or with two', () => {
  const accessLog = join(root, 'host-access.log');
  let s: RunningServer;
  before(async () => {
    s = await startServer(`global:\n  wwwroot: ${www}\n  logFilePath: ${accessLog}\n`);
  });
  after(() => s.close());

  it('HTTP/1.1 without Host is Portico’s own 400, logged (RFC 9112 §3.2)', async () => {
    for (const target of ['/256.txt', 'http://a.test/256.txt']) {
      const reply = await raw(s.port, `GET ${target} HTTP/1.1\r\nConnection: close\r\n\r\n`);
      assert.match(reply, /^HTTP\/1\.1 400 /, target);
      assert.match(reply, /\r\nServer: Portico\r\n/, target);
    }
    await logged(() => readFileSync(accessLog, 'utf8'), /"GET \/256\.txt HTTP\/1\.1" 400 /);
  });

  it('two Host headers are a 400', async () => {
    assert.match(
      await raw(
        s.port,
        'GET /256.txt HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\nConnection: close\r\n\r\n',
      ),
      /^HTTP\/1\.1 400 /,
    );
  });

  it('HTTP/1.0 without Host goes to the default host', async () => {
    assert.match(
      await raw(s.port, 'GET /256.txt HTTP/1.0\r\n\r\n'),
      /^HTTP\/1\.1 200 [^]*\r\n\r\nx{256}$/,
    );
  });
});

describe('the blocklist answers before anything else', () => {
  const errs = join(root, 'blocked-errors');
  let s: RunningServer;
  before(async () => {
    mkdirSync(errs, { recursive: true });
    writeFileSync(join(errs, 'blocked.html'), '<p>you are blocked</p>');
    s = await startServer(`
global:
  wwwroot: ${www}
  blocklist: [127.0.0.1, 192.0.2.7]
  customHeaders:
    X-Path: "p={path}"
hosts:
  - domain: errcfg.test
    errorConfig:
      - scode: 403
        wwwroot: ${errs}
        rewriteMap:
          - regex: ".*"
            replacement: /blocked.html
  - domain: proxied.test
    locations:
      - path: /api
        enableIPSpoofing: true
`);
  });
  after(() => s.close());

  const status = async (head: string) =>
    /^HTTP\/1\.1 (\d{3}) /.exec(await raw(s.port, `${head}\r\nConnection: close\r\n\r\n`))?.[1];

  it('a blocked client gets 403 for malformed requests too, never their 400 or 204', async () => {
    for (const head of [
      'GET /%00 HTTP/1.1\r\nHost: a.test',
      'GET /%zz HTTP/1.1\r\nHost: a.test',
      'OPTIONS * HTTP/1.1\r\nHost: a.test',
      'GET * HTTP/1.1\r\nHost: a.test',
      'GET ftp://a/ HTTP/1.1\r\nHost: a.test',
      'GET / HTTP/1.1\r\nHost: example.org:@evil.com',
      'GET / HTTP/1.1',
      'GET / HTTP/1.1\r\nHost: a.test\r\nHost: b.test',
      'GET http://a.test/256.txt HTTP/1.1\r\nHost: a.test',
      'DELETE /256.txt HTTP/1.1\r\nHost: a.test',
    ]) {
      assert.equal(await status(head), '403', head);
    }
  });

  it('the 403 of a well-formed request goes through errorConfig; a malformed one gets the default page', async () => {
    const page = await raw(
      s.port,
      'GET /256.txt HTTP/1.1\r\nHost: errcfg.test\r\nConnection: close\r\n\r\n',
    );
    assert.match(
      page,
      /^HTTP\/1\.1 403 [^]*\r\nX-Path: p=\/256\.txt\r\n[^]*\r\n\r\n<p>you are blocked<\/p>$/,
    );
    const malformed = await raw(
      s.port,
      'GET /x/%zz HTTP/1.1\r\nHost: errcfg.test\r\nConnection: close\r\n\r\n',
    );
    assert.match(
      malformed,
      /^HTTP\/1\.1 403 [^]*\r\nX-Path: p=\/x\/%zz\r\n[^]*<title>403 Forbidden<\/title>/,
    );
  });
});

describe('the blocklist sees the X-Forwarded-For client of the location', () => {
  let s: RunningServer;
  before(async () => {
    s = await startServer(`
global:
  wwwroot: ${www}
  blocklist: [192.0.2.7]
hosts:
  - domain: proxied.test
    locations:
      - path: /api
        enableIPSpoofing: true
`);
  });
  after(() => s.close());

  const status = async (target: string, client: string) =>
    /^HTTP\/1\.1 (\d{3}) /.exec(
      await raw(
        s.port,
        `GET ${target} HTTP/1.1\r\nHost: proxied.test\r\nX-Forwarded-For: ${client}\r\nConnection: close\r\n\r\n`,
      ),
    )?.[1];

  it('before the path is refused, and wherever the sanitized path lands', async () => {
    assert.equal(await status('/api/%zz', '192.0.2.7'), '403');
    assert.equal(await status('/api/%zz', '192.0.2.8'), '400');
    assert.equal(await status('/api/x', '192.0.2.7'), '403');
    assert.equal(
      await status('/x/../api/x', '192.0.2.7'),
      '403',
      'the location of the sanitized path trusts the header',
    );
    assert.equal(
      await status('/api/../256.txt', '192.0.2.7'),
      '200',
      'outside /api the header is not trusted',
    );
    assert.equal(await status('/api/x', 'bogus'), '400');
  });
});

describe('CONNECT', () => {
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
  enableIPSpoofing: true
  blocklist: [192.0.2.7]
  customHeaders:
    X-Served: portico
  users:
    - name: alice
      pass: "$argon2id$v=19$m=19456,t=2,p=1$5wESvu+NfBbQH/1kemQDFg$8Wvlbd7ud4qo4NgcgpfuFDN6Un3ExQnVCCy2Bg3Lefw"
  nonStandardCodes:
    - scode: 401
      regex: "^/"
      disableBruteProtection: true
`);
  });
  after(() => s.close());

  it('HTTP/1.1: 501 with an empty body and the usual headers, before authentication', async () => {
    const reply = await raw(s.port, 'CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\n\r\n');
    assert.match(reply, /^HTTP\/1\.1 501 /);
    assert.match(reply, /\r\nServer: Portico\r\n/);
    assert.match(reply, /\r\nContent-Length: 0\r\n/);
    assert.match(reply, /\r\nX-Served: portico\r\n/);
    assert.match(reply, /\r\n\r\n$/, 'no body');
    assert.match(
      await raw(s.port, 'GET / HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n'),
      /^HTTP\/1\.1 401 /,
      'anything else asks to log in',
    );
  });

  it('HTTP/1.1: a blocked client gets 403, a CONNECT without Host 400', async () => {
    assert.match(
      await raw(
        s.port,
        'CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\nX-Forwarded-For: 192.0.2.7\r\n\r\n',
      ),
      /^HTTP\/1\.1 403 /,
    );
    assert.match(await raw(s.port, 'CONNECT a.test:443 HTTP/1.1\r\n\r\n'), /^HTTP\/1\.1 400 /);
  });

  it('HTTP/2 (:authority, no :path): 501 with an empty body, before authentication', async () => {
    const session = http2Connect(`https://127.0.0.1:${sport}`, {
      ca: TEST_CA,
      servername: 'localhost',
    });
    try {
      const reply = await new Promise<{ headers: IncomingHttpHeaders; body: string }>(
        (resolve, reject) => {
          const stream = session.request({ ':method': 'CONNECT', ':authority': 'a.test:443' });
          let headers: IncomingHttpHeaders = {};
          let body = '';
          stream.setEncoding('utf8');
          stream.on('response', (h) => (headers = h));
          stream.on('data', (d: string) => (body += d));
          stream.on('end', () => resolve({ headers, body }));
          stream.on('error', reject);
        },
      );
      assert.equal(reply.headers[':status'], 501);
      assert.equal(reply.headers.server, 'Portico');
      assert.equal(reply.headers['x-served'], 'portico');
      assert.equal(reply.body, '');
    } finally {
      session.close();
    }
  });
});
