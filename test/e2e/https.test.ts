// HTTPS as users meet it: real TLS handshakes on 127.0.0.1 with the committed test certificates
// (test/fixtures/tls, made by make.sh with openssl): SNI, TLS policy, client certificates, HTTP/2
// by ALPN, the HTTP → HTTPS redirect, and certificates reloaded under open connections.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { spawn, spawnSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { connect as http2Connect } from 'node:http2';
import { connect as netConnect } from 'node:net';
import { Readable } from 'node:stream';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { connect as tlsConnect, type ConnectionOptions, type PeerCertificate } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import { runCli, runServing } from '../helpers/cli.js';
import { request } from '../helpers/http.js';
import { freePort, startServer, type RunningServer } from '../helpers/server.js';
import { TEST_CA as CA, TLS } from '../helpers/tls.js';
import { until } from '../helpers/wait.js';
import { DEFAULT_LIMITS } from '../../src/server/protocol-server.js';
const root = mkdtempSync(join(tmpdir(), 'portico-https-'));
const www = join(root, 'www');
mkdirSync(www);
writeFileSync(join(www, 'index.html'), 'secure hello');
writeFileSync(join(www, 'large.bin'), Buffer.alloc(3 * 1024 * 1024, 9));
after(() => rmSync(root, { recursive: true, force: true }));

const tlsBlock = (extra = '') =>
  `  secure: true\n  cert: ${join(TLS, 'server.crt')}\n  key: ${join(TLS, 'server.key')}\n  wwwroot: ${www}\n${extra}`;

async function secureServer(extra = '', sni = ''): Promise<{ s: RunningServer; sport: number }> {
  const sport = await freePort();
  const s = await startServer(`global:\n  sport: "127.0.0.1:${sport}"\n${tlsBlock(extra)}${sni}`);
  return { s, sport };
}

/** An HTTP/2 session to the secure listener, trusting the test CA, named localhost. */
function connect2(sport: number) {
  return http2Connect(`https://localhost:${sport}`, { ca: CA, host: '127.0.0.1' } as never);
}

function get(
  port: number,
  options: RequestOptions = {},
): Promise<{ status: number; body: string; cert: PeerCertificate; protocol: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        path: '/',
        ca: CA,
        servername: 'localhost',
        agent: false,
        ...options,
      },
      (res) => {
        let body = '';
        const socket = res.socket as import('node:tls').TLSSocket;
        res.setEncoding('utf8').on('data', (d: string) => (body += d));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body,
            cert: socket.getPeerCertificate(),
            protocol: socket.getProtocol() ?? '',
          }),
        );
      },
    );
    req.on('error', reject).end();
  });
}

function handshake(
  port: number,
  options: ConnectionOptions,
): Promise<{ cn: string; protocol: string | null; cipher: string; alpn: string | false }> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect(
      { host: '127.0.0.1', port, ca: CA, servername: 'localhost', ...options },
      () => {
        const result = {
          cn: String(socket.getPeerCertificate().subject?.CN),
          protocol: socket.getProtocol(),
          cipher: socket.getCipher().standardName,
          alpn: socket.alpnProtocol ?? false,
        };
        // A refused client certificate arrives as an alert just after the handshake: read a moment.
        socket.end();
        socket.once('close', () => resolve(result));
      },
    );
    socket.on('error', reject);
  });
}

describe('HTTPS', () => {
  it('serves over TLS with the chain from the cert file', async () => {
    const { s, sport } = await secureServer();
    try {
      const r = await get(sport);
      assert.deepEqual([r.status, r.body, r.cert.subject.CN], [200, 'secure hello', 'localhost']);
      assert.deepEqual(s.server.listenerUrls.sort(), [
        `http://127.0.0.1:${s.port}`,
        `https://127.0.0.1:${sport}`,
      ]);
    } finally {
      await s.close();
    }
  });

  it('chooses the certificate by SNI: exact, wildcard, then the global one', async () => {
    const sni = `  sni:\n    example.com:\n      cert: ${join(TLS, 'example.com.crt')}\n      key: ${join(TLS, 'example.com.key')}\n    "*.example.org":\n      cert: ${join(TLS, 'example.org.crt')}\n      key: ${join(TLS, 'example.org.key')}\n`;
    const { s, sport } = await secureServer('', sni);
    try {
      assert.equal((await handshake(sport, { servername: 'example.com' })).cn, 'example.com');
      assert.equal(
        (await handshake(sport, { servername: 'shop.example.org' })).cn,
        '*.example.org',
      );
      assert.equal((await handshake(sport, { servername: 'EXAMPLE.ORG' })).cn, '*.example.org');
      assert.equal((await handshake(sport, { servername: 'localhost' })).cn, 'localhost');
    } finally {
      await s.close();
    }
  });

  it('refuses TLS 1.2 under tlsMinVersion TLSv1.3', async () => {
    const { s, sport } = await secureServer('  tlsMinVersion: TLSv1.3\n');
    try {
      assert.equal((await handshake(sport, {})).protocol, 'TLSv1.3');
      await assert.rejects(handshake(sport, { maxVersion: 'TLSv1.2' }), /protocol version|alert/i);
    } finally {
      await s.close();
    }
  });

  it('refuses a cipher suite outside cipherSuite', async () => {
    const { s, sport } = await secureServer(
      '  tlsMaxVersion: TLSv1.2\n  cipherSuite: [TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384]\n',
    );
    try {
      assert.equal((await handshake(sport, {})).cipher, 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384');
      await assert.rejects(
        handshake(sport, { ciphers: 'ECDHE-ECDSA-AES128-GCM-SHA256' }),
        /handshake failure|alert/i,
      );
    } finally {
      await s.close();
    }
  });

  it('offers only the curves of ecdhCurve', async () => {
    const { s, sport } = await secureServer('  ecdhCurve: [secp384r1]\n');
    try {
      assert.equal((await handshake(sport, { ecdhCurve: 'secp384r1' })).protocol, 'TLSv1.3');
      await assert.rejects(
        handshake(sport, { ecdhCurve: 'X25519' }),
        /handshake failure|alert|group/i,
      );
    } finally {
      await s.close();
    }
  });

  it('requires a client certificate that chains to clientCertificateCA (mTLS)', async () => {
    const { s, sport } = await secureServer(
      `  useClientCertificate: true\n  clientCertificateCA: ${join(TLS, 'clients-ca.pem')}\n`,
    );
    try {
      const withCert = await get(sport, {
        cert: readFileSync(join(TLS, 'client.crt')),
        key: readFileSync(join(TLS, 'client.key')),
      });
      assert.equal(withCert.status, 200);
      await assert.rejects(get(sport), /certificate|alert|socket hang up|ECONNRESET/i);
      // A certificate from another CA (the server's own) is refused too.
      await assert.rejects(
        get(sport, {
          cert: readFileSync(join(TLS, 'example.com.crt')),
          key: readFileSync(join(TLS, 'example.com.key')),
        }),
        /certificate|alert|socket hang up|ECONNRESET/i,
      );
    } finally {
      await s.close();
    }
  });
});

describe('client certificates without clientCertificateCA', () => {
  it('are checked against Node’s trust store plus NODE_EXTRA_CA_CERTS, as Ferron uses the OS store', async (t) => {
    const sport = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'portico-mtls-'));
    writeFileSync(
      join(dir, 'p.yaml'),
      `global:\n  port: "127.0.0.1:${await freePort()}"\n  sport: "127.0.0.1:${sport}"\n${tlsBlock()}  useClientCertificate: true\n`,
    );
    // The clients' CA is trusted the way an operator would add their own: NODE_EXTRA_CA_CERTS.
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const { child, exited } = await runServing(join(dir, 'p.yaml'), {
      env: { ...process.env, NODE_EXTRA_CA_CERTS: join(TLS, 'clients-ca.pem') },
    });
    t.after(async () => {
      child.kill('SIGTERM');
      await exited;
    });
    const withCert = () =>
      get(sport, {
        cert: readFileSync(join(TLS, 'client.crt')),
        key: readFileSync(join(TLS, 'client.key')),
      });
    assert.equal((await withCert()).status, 200);
    await assert.rejects(get(sport), /certificate|alert|socket hang up|ECONNRESET/i);
    await assert.rejects(
      get(sport, {
        cert: readFileSync(join(TLS, 'example.com.crt')),
        key: readFileSync(join(TLS, 'example.com.key')),
      }),
      /certificate|alert|socket hang up|ECONNRESET/i,
    );
  });
});

describe('HTTP/2', () => {
  it('is negotiated by ALPN, with HTTP/1.1 as the fallback and http2Settings applied', async () => {
    const { s, sport } = await secureServer(
      '  http2Settings:\n    maxConcurrentStreams: 7\n    initialWindowSize: 131072\n    enableConnectProtocol: true\n',
    );
    try {
      assert.equal((await handshake(sport, { ALPNProtocols: ['h2', 'http/1.1'] })).alpn, 'h2');
      assert.equal((await handshake(sport, { ALPNProtocols: ['http/1.1'] })).alpn, 'http/1.1');
      const session = connect2(sport);
      const settings = await new Promise<import('node:http2').Settings>((resolve) =>
        session.once('remoteSettings', resolve),
      );
      assert.equal(settings.maxConcurrentStreams, 7);
      assert.equal(settings.initialWindowSize, 131072);
      assert.equal(settings.enableConnectProtocol, true);
      const reply = await new Promise<{ status: number; body: string; server: string }>(
        (resolve, reject) => {
          const stream = session.request({ ':path': '/index.html' });
          let body = '';
          let status = 0;
          let server = '';
          stream.on(
            'response',
            (h) => ((status = Number(h[':status'])), (server = String(h.server))),
          );
          stream
            .setEncoding('utf8')
            .on('data', (d: string) => (body += d))
            .on('end', () => resolve({ status, body, server }))
            .on('error', reject);
        },
      );
      assert.deepEqual(reply, { status: 200, body: 'secure hello', server: 'Portico' });
      session.close();
      assert.equal((await get(sport)).body, 'secure hello', 'HTTP/1.1 over the same listener');
    } finally {
      await s.close();
    }
  });

  it('streams large files, answers HEAD, 304 and error pages over HTTP/2', async () => {
    const { s, sport } = await secureServer();
    const session = connect2(sport);
    const fetch2 = (headers: Record<string, string>) =>
      new Promise<{
        status: number;
        headers: import('node:http2').IncomingHttpHeaders;
        body: Buffer;
      }>((resolve, reject) => {
        const stream = session.request(headers);
        const chunks: Buffer[] = [];
        let head: import('node:http2').IncomingHttpHeaders = {};
        stream.on('response', (h) => (head = h));
        stream.on('data', (d: Buffer) => chunks.push(d));
        stream.on('end', () =>
          resolve({ status: Number(head[':status']), headers: head, body: Buffer.concat(chunks) }),
        );
        stream.on('error', reject);
      });
    try {
      const large = await fetch2({ ':path': '/large.bin' });
      assert.equal(large.status, 200);
      assert.equal(large.body.length, 3 * 1024 * 1024);
      assert.ok(large.body.every((b) => b === 9));
      const head = await fetch2({ ':path': '/index.html', ':method': 'HEAD' });
      assert.deepEqual(
        [head.status, head.body.length, head.headers['content-length']],
        [200, 0, '12'],
      );
      const again = await fetch2({
        ':path': '/index.html',
        'if-none-match': String(head.headers.etag),
      });
      assert.deepEqual([again.status, again.body.length], [304, 0]);
      const missing = await fetch2({ ':path': '/nope' });
      assert.equal(missing.status, 404);
      assert.match(missing.body.toString(), /<title>404 Not Found<\/title>/);
      assert.equal(missing.headers.server, 'Portico');
    } finally {
      session.close();
      await s.close();
    }
  });

  it('answers Expect over HTTP/2 (100, or 417) and leaves a session usable after unread bodies', async () => {
    const { s, sport } = await secureServer();
    const session = connect2(sport);
    function* chunks(body: Buffer) {
      for (let i = 0; i < body.length; i += 65536) yield body.subarray(i, i + 65536);
    }
    // The body goes after the 100 when `expect` is set, at once otherwise.
    const withBody = (headers: Record<string, string>, body: Buffer) =>
      new Promise<{ status: number; continued: boolean; length: number }>((resolve, reject) => {
        // A GET with a body: static files take GET, and no stage reads the body.
        const stream = session.request({ ':method': 'GET', ...headers }, { endStream: false });
        let status = 0;
        let continued = false;
        let length = 0;
        // Sent as a client that respects backpressure does, so a refused rest is not queued.
        const send = () => Readable.from(chunks(body)).pipe(stream);
        stream.on('continue', () => {
          continued = true;
          send();
        });
        stream.on('response', (h) => (status = Number(h[':status'])));
        stream.on('data', (d: Buffer) => (length += d.length));
        stream.on('close', () => resolve({ status, continued, length }));
        stream.on('error', reject);
        if (headers.expect === undefined) send();
      });
    try {
      assert.deepEqual(
        await withBody({ ':path': '/index.html', expect: '100-continue' }, Buffer.from('x')),
        { status: 200, continued: true, length: 12 },
      );
      const refused = await withBody(
        { ':path': '/index.html', expect: 'something' },
        Buffer.from('x'),
      );
      assert.deepEqual([refused.status, refused.continued], [417, false]);
      // Bodies far beyond the stream's flow-control window that no stage reads: each stream ends
      // with its answer (the client is told to stop sending), none is left open in the session.
      const big = Buffer.alloc(4 * 1024 * 1024, 97);
      for (let i = 0; i < 3; i++)
        assert.equal((await withBody({ ':path': '/index.html' }, big)).status, 200);
      assert.equal((await withBody({ ':path': '/index.html' }, Buffer.from('y'))).length, 12);
    } finally {
      session.close();
      await s.close();
    }
  });

  it('cuts off slow HTTP/1.1 clients of the HTTP/2 listener too (slowloris over TLS)', async () => {
    const sport = await freePort();
    const s = await startServer(`global:\n  sport: "127.0.0.1:${sport}"\n${tlsBlock()}`, {
      limits: {
        headersTimeoutMs: 400,
        requestTimeoutMs: 2000,
        keepAliveTimeoutMs: 500,
        checkIntervalMs: 100,
      },
    });
    try {
      const slow = (request: string) =>
        new Promise<{ ms: number; data: string }>((resolve, reject) => {
          const started = Date.now();
          let data = '';
          const socket = tlsConnect(
            {
              host: '127.0.0.1',
              port: sport,
              ca: CA,
              servername: 'localhost',
              ALPNProtocols: ['http/1.1'],
            },
            () => socket.write(request),
          );
          socket.setEncoding('utf8').on('data', (d: string) => (data += d));
          socket.on('close', () => resolve({ ms: Date.now() - started, data }));
          socket.on('error', reject);
        });
      const partial = await slow('GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ');
      assert.ok(partial.ms < 2000, `closed after ${partial.ms} ms`);
      // A kept-alive connection that sends nothing after its response is closed the same way.
      const idle = await slow('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      assert.match(idle.data, /^HTTP\/1\.1 200 /);
      assert.ok(idle.ms < 2000, `closed after ${idle.ms} ms`);
    } finally {
      await s.close();
    }
  });

  it('limits the HTTP/1.1 fallback of the HTTP/2 listener as the plain listener: a body that trickles, an idle connection', async (t) => {
    // A backend that waits for the whole body before it answers.
    const backend = createHttpServer((req, res) => {
      req.resume();
      req.on('end', () => res.end('got it'));
    });
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
    const sport = await freePort();
    const limits = {
      headersTimeoutMs: 1000,
      requestTimeoutMs: 1000,
      keepAliveTimeoutMs: 400,
      checkIntervalMs: 100,
    };
    t.after(() => {
      backend.closeAllConnections();
      backend.close();
    });
    const s = await startServer(
      `global:\n  sport: "127.0.0.1:${sport}"\n  loadModules: [rproxy]\n  proxyTo: http://127.0.0.1:${(backend.address() as { port: number }).port}\n${tlsBlock()}`,
      { limits },
    );
    const open = (secure: boolean) => {
      const options = {
        host: '127.0.0.1',
        port: secure ? sport : s.port,
        ca: CA,
        servername: 'localhost',
        ALPNProtocols: ['http/1.1'],
      };
      return secure ? tlsConnect(options) : netConnect(options.port, options.host);
    };
    /** ms until the server closes a connection that sends `head` then a byte every 100 ms. */
    const trickle = (secure: boolean, head: string, bytes: number) =>
      new Promise<{ ms: number; data: string }>((resolve, reject) => {
        const started = Date.now();
        const socket = open(secure);
        let data = '';
        let sent = 0;
        socket.write(head);
        const timer = setInterval(() => {
          if (sent++ < bytes && socket.writable) socket.write('x');
        }, 100);
        socket.setEncoding('utf8').on('data', (d: string) => (data += d));
        socket.on('close', () => {
          clearInterval(timer);
          resolve({ ms: Date.now() - started, data });
        });
        socket.on('error', () => undefined);
        setTimeout(() => reject(new Error('never closed')), 8000).unref();
      });
    try {
      // 50 bytes at 10 a second would take 5 s: the request limit (1 s) cuts it, on both.
      const post = 'POST /up HTTP/1.1\r\nHost: localhost\r\nContent-Length: 50\r\n\r\n';
      for (const secure of [false, true]) {
        const cut = await trickle(secure, post, 50);
        assert.ok(cut.ms < 2500, `${secure ? 'TLS' : 'plain'}: closed after ${cut.ms} ms`);
        assert.doesNotMatch(cut.data, /got it/);
      }
      // After a response, the next head must come within the keep-alive limit (0.4 s).
      for (const secure of [false, true]) {
        const idle = await trickle(secure, 'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n', 0);
        assert.match(idle.data, /^HTTP\/1\.1 /);
        assert.ok(idle.ms < 1500, `${secure ? 'TLS' : 'plain'}: idle closed after ${idle.ms} ms`);
      }
    } finally {
      await s.close();
    }
  });

  it('ends the session of a client that died mid-download (no connection or open file left behind)', async (t) => {
    if (spawnSync('curl', ['--version']).status !== 0) {
      assert.ok(!process.env.CI, 'curl is needed under CI');
      return t.skip('curl is not installed');
    }
    const sport = await freePort();
    const s = await startServer(`global:\n  sport: "127.0.0.1:${sport}"\n${tlsBlock()}`, {
      limits: { ...DEFAULT_LIMITS, http2LivenessMs: 300 },
    });
    try {
      // Larger than every buffer between the two ends (a sparse file: no disk, no memory).
      writeFileSync(join(www, 'huge.bin'), '');
      truncateSync(join(www, 'huge.bin'), 64 * 1024 * 1024);
      const openFiles = () =>
        readdirSync('/proc/self/fd').filter((fd) => {
          try {
            return readlinkSync(`/proc/self/fd/${fd}`).endsWith('huge.bin');
          } catch {
            return false;
          }
        }).length;
      // A slow reader, killed outright once the download flows: its kernel resets the connection
      // while the server's writes are still queued.
      const curl = spawn('curl', [
        '-sk',
        '--http2',
        '--limit-rate',
        '500k',
        '--resolve',
        `localhost:${sport}:127.0.0.1`,
        `https://localhost:${sport}/huge.bin`,
      ]);
      let received = 0;
      curl.stdout.on('data', (d: Buffer) => (received += d.length));
      await until(() => received >= 256 * 1024 && openFiles() === 1, {
        what: 'the download under way',
      });
      assert.equal(s.server.connectionsActive, 1);
      curl.kill('SIGKILL');
      await until(() => s.server.connectionsActive === 0 && openFiles() === 0, {
        what: 'no connection or open file left',
      });
      assert.doesNotMatch(
        s.stderr(),
        /Unexpected error/,
        'a client going away is not a server error',
      );
    } finally {
      await s.close();
    }
  });

  it('closes a session left without streams and silent for the idle time, and not one whose download waits on its reader', async () => {
    const sport = await freePort();
    const s = await startServer(`global:\n  sport: "127.0.0.1:${sport}"\n${tlsBlock()}`, {
      limits: { ...DEFAULT_LIMITS, http2LivenessMs: 300, http2IdleMs: 900 },
    });
    try {
      const idle = connect2(sport);
      const idleClosed = once(idle, 'close');
      const answered = idle.request({ ':path': '/' });
      answered.resume();
      await once(answered, 'end');
      const quietFrom = Date.now();
      const busy = connect2(sport);
      busy.on('goaway', () => assert.fail('the busy session got GOAWAY'));
      // The liveness check pings a session it has not heard from: each ping is a check it passed.
      let pings = 0;
      busy.on('ping', () => pings++);
      const download = busy.request({ ':path': '/large.bin' });
      await once(download, 'response');
      download.pause();
      await idleClosed;
      const quietMs = Date.now() - quietFrom;
      // Closed at the first check once the idle time has passed: 900 ms, plus up to two intervals.
      assert.ok(quietMs >= 850 && quietMs < 4000, `idle session closed after ${quietMs} ms`);
      // Two more checks, past the idle time, with its download still waiting.
      const seen = pings;
      await until(() => pings >= seen + 2, { what: 'two liveness pings on the busy session' });
      let length = 0;
      download.on('data', (d: Buffer) => (length += d.length));
      download.resume();
      await once(download, 'end');
      assert.equal(length, 3 * 1024 * 1024);
      assert.equal(busy.closed || busy.destroyed, false, 'the busy session stays open');
      busy.close();
    } finally {
      await s.close();
    }
  });

  // A regression shows as a stream that never settles: the timeout turns it into a failure.
  it(
    'lets a client that sent GOAWAY read its last response as slowly as it likes (the liveness check leaves closing sessions alone)',
    {
      timeout: 20_000,
    },
    async () => {
      const sport = await freePort();
      const s = await startServer(`global:\n  sport: "127.0.0.1:${sport}"\n${tlsBlock()}`, {
        limits: { ...DEFAULT_LIMITS, http2LivenessMs: 200 },
      });
      try {
        const session = connect2(sport);
        const stream = session.request({ ':path': '/large.bin' });
        await new Promise((resolve) => stream.once('response', resolve));
        stream.pause();
        session.close();
        // Nothing happens to wait for (a closing session is not pinged): five liveness intervals.
        await sleep(1000);
        let length = 0;
        stream.on('data', (d: Buffer) => (length += d.length));
        stream.resume();
        // 'close' comes whether the stream ended or was cut off; the length tells which.
        await new Promise((resolve) => stream.once('close', resolve).on('error', () => undefined));
        assert.equal(length, 3 * 1024 * 1024);
      } finally {
        await s.close();
      }
    },
  );

  it('is not offered with enableHTTP2: false', async () => {
    const { s, sport } = await secureServer('  enableHTTP2: false\n');
    try {
      assert.equal(
        (await handshake(sport, { ALPNProtocols: ['h2', 'http/1.1'] })).alpn,
        'http/1.1',
      );
      assert.equal((await get(sport)).status, 200);
    } finally {
      await s.close();
    }
  });
});

describe('HTTP → HTTPS redirect', () => {
  it('redirects the plain port to sport, keeping path and query; disableNonEncryptedServer closes it', async () => {
    const { s, sport } = await secureServer();
    try {
      const r = await request(s.port, '/a/b?c=1', { headers: { host: `localhost:${s.port}` } });
      assert.equal(r.status, 301);
      assert.equal(r.headers.location, `https://localhost:${sport}/a/b?c=1`);
      assert.equal((await get(sport)).body, 'secure hello', 'no redirect over HTTPS itself');
    } finally {
      await s.close();
    }
    const closed = await secureServer('  disableNonEncryptedServer: true\n');
    try {
      await assert.rejects(request(closed.s.port, '/'), /ECONNREFUSED/);
      assert.equal((await get(closed.sport)).status, 200);
    } finally {
      await closed.s.close();
    }
  });
});

describe('reload', () => {
  it('swaps certificates for new handshakes without dropping open connections', async () => {
    const { s, sport } = await secureServer();
    try {
      const session = connect2(sport);
      await new Promise((resolve) => session.once('remoteSettings', resolve));
      s.rewrite(
        `global:\n  sport: "127.0.0.1:${sport}"\n  secure: true\n  cert: ${join(TLS, 'example.com.crt')}\n  key: ${join(TLS, 'example.com.key')}\n  wwwroot: ${www}\n`,
      );
      const outcome = await s.server.reloadFromSource();
      assert.equal(outcome.ok, true);
      assert.equal((await handshake(sport, { servername: 'example.com' })).cn, 'example.com');
      const stillOpen = await new Promise<number>((resolve, reject) => {
        const stream = session.request({ ':path': '/' });
        stream.on('response', (h) => resolve(Number(h[':status'])));
        stream.on('error', reject);
        stream.resume();
      });
      assert.equal(stillOpen, 200, 'the connection opened before the reload still serves');
      session.close();
    } finally {
      await s.close();
    }
  });

  it('switches HTTP/2 off and on without unbinding the port: sessions in flight finish, new handshakes follow the new setting', async () => {
    const { s, sport } = await secureServer();
    try {
      const session = connect2(sport);
      const stream = session.request({ ':path': '/large.bin' });
      await new Promise((resolve) => stream.once('response', resolve));
      stream.pause();
      const received = new Promise<number>((resolve, reject) => {
        let length = 0;
        stream
          .on('data', (d: Buffer) => (length += d.length))
          .on('end', () => resolve(length))
          .on('error', reject);
      });
      const closed = new Promise((resolve) => session.once('close', resolve));
      s.rewrite(`global:\n  sport: "127.0.0.1:${sport}"\n${tlsBlock('  enableHTTP2: false\n')}`);
      assert.equal((await s.server.reloadFromSource()).ok, true);
      assert.equal(
        (await handshake(sport, { ALPNProtocols: ['h2', 'http/1.1'] })).alpn,
        'http/1.1',
        'HTTP/2 no longer offered',
      );
      assert.equal((await get(sport)).body, 'secure hello');
      assert.deepEqual(
        s.server.listenerUrls.filter((u) => u.endsWith(`:${sport}`)),
        [`https://127.0.0.1:${sport}`],
      );
      stream.resume();
      assert.equal(await received, 3 * 1024 * 1024, 'the stream in flight finished');
      await closed;
      s.rewrite(`global:\n  sport: "127.0.0.1:${sport}"\n${tlsBlock()}`);
      assert.equal((await s.server.reloadFromSource()).ok, true);
      assert.equal((await handshake(sport, { ALPNProtocols: ['h2', 'http/1.1'] })).alpn, 'h2');
    } finally {
      await s.close();
    }
  });

  it('turns a plain port into an HTTPS one in place, and a failed reload leaves it as it was', async () => {
    const port = await freePort();
    const s = await startServer(`global:\n  port: "127.0.0.1:${port}"\n  wwwroot: ${www}\n`);
    try {
      assert.equal((await request(port, '/')).text, 'secure hello');
      // The same address as sport, and a second address that is taken: the reload must fail whole.
      const taken = await freePort();
      const blocker = (await import('node:net')).createServer().listen(taken, '127.0.0.1');
      await new Promise((resolve) => blocker.once('listening', resolve));
      s.rewrite(
        `global:\n  port: "127.0.0.1:${taken}"\n  sport: "127.0.0.1:${port}"\n${tlsBlock()}`,
      );
      const failed = await s.server.reloadFromSource();
      blocker.close();
      assert.equal(failed.ok, false);
      assert.equal((await request(port, '/')).text, 'secure hello', 'still plain HTTP');
      s.rewrite(
        `global:\n  sport: "127.0.0.1:${port}"\n  disableNonEncryptedServer: true\n${tlsBlock()}`,
      );
      assert.equal((await s.server.reloadFromSource()).ok, true);
      assert.equal((await get(port)).body, 'secure hello');
      assert.deepEqual(s.server.listenerUrls, [`https://127.0.0.1:${port}`]);
    } finally {
      await s.close();
    }
  });

  it('says, in validate and at start alike, that HTTP/3 is not served, and what is', async () => {
    const file = join(root, 'http3.yaml');
    const said = async (yaml: string) => {
      writeFileSync(file, yaml);
      const validated = await runCli(['validate', '-c', file]);
      assert.equal(validated.code, 0, validated.stderr);
      return validated.stdout + validated.stderr;
    };
    assert.match(
      await said(`global:\n  enableHTTP3: true\n  wwwroot: ${www}\n`),
      /warning: global\.enableHTTP3: HTTP\/3 is not served: this Node\.js runtime has no QUIC support \(enableHTTP3 is ignored; HTTP\/3 needs HTTPS too, and secure is off\)/,
    );
    const port = await freePort();
    writeFileSync(
      file,
      `global:\n  port: "127.0.0.1:${port}"\n  enableHTTP3: true\n  workers: 1\n`,
    );
    const cli = await runServing(file);
    assert.match(
      cli.output(),
      /enableHTTP3 is ignored; HTTP\/3 needs HTTPS too, and secure is off/,
    );
    cli.child.kill('SIGTERM');
    assert.equal(await cli.exited, 0);
  });
});
