// Requests Node's HTTP servers would answer on their own, before Portico sees them: CONNECT (Node
// closes the connection of an HTTP/1 CONNECT nobody handles, and answers an HTTP/2 one with a bare
// 405) and an HTTP/1.1 request without Host (Node's own 400). Each must get Portico's answer, with
// its headers and an access-log line.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect as http2Connect } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { raw } from '../helpers/http.js';
import { freePort, startServer } from '../helpers/server.js';
import { SERVER_CERT, SERVER_KEY, TEST_CA as CA } from '../helpers/tls.js';
import { until } from '../helpers/wait.js';

const root = mkdtempSync(join(tmpdir(), 'portico-connect-'));
const www = join(root, 'www');
mkdirSync(www);
writeFileSync(join(www, 'index.html'), 'hello');
const accessLog = join(root, 'access.log');
after(() => rmSync(root, { recursive: true, force: true }));

async function withServer(run: (port: number, sport: number) => Promise<void>): Promise<void> {
  const sport = await freePort();
  const s = await startServer(
    `global:\n  sport: "127.0.0.1:${sport}"\n  secure: true\n  cert: ${SERVER_CERT}\n  key: ${SERVER_KEY}\n  wwwroot: ${www}\n  logFilePath: ${accessLog}\n`,
  );
  try {
    await run(s.port, sport);
  } finally {
    await s.close();
  }
}

function tlsRaw(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let reply = '';
    const socket = tlsConnect(
      { host: '127.0.0.1', port, ca: CA, servername: 'localhost', ALPNProtocols: ['http/1.1'] },
      () => socket.write(bytes),
    );
    socket.setEncoding('utf8').on('data', (d: string) => (reply += d));
    socket.on('close', () => resolve(reply)).on('error', reject);
  });
}

describe('CONNECT without a module that tunnels', () => {
  it('is answered 501 over HTTP/1.1 (plain and TLS) and HTTP/2, with Portico headers, and logged', () =>
    withServer(async (port, sport) => {
      for (const reply of [
        await raw(port, 'CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\n\r\n'),
        await tlsRaw(sport, 'CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\n\r\n'),
      ]) {
        assert.match(reply, /^HTTP\/1\.1 501 Not Implemented\r\n/);
        assert.match(reply, /\r\nServer: Portico\r\n/i);
        assert.match(reply, /\r\nConnection: close\r\n/i);
      }
      const session = http2Connect(`https://localhost:${sport}`, {
        ca: CA,
        host: '127.0.0.1',
      } as never);
      const headers = await new Promise<Record<string, unknown>>((resolve, reject) => {
        const stream = session.request({ ':method': 'CONNECT', ':authority': 'a.test:443' });
        stream.on('response', resolve).on('error', reject);
      });
      session.close();
      assert.equal(headers[':status'], 501);
      assert.equal(headers.server, 'Portico');
    }).then(() => {
      // The access log is buffered; the server has stopped, so it is all on disk now.
      const lines = readFileSync(accessLog, 'utf8').trim().split('\n');
      assert.equal(
        lines.filter((l) => / "CONNECT a\.test:443 HTTP\/(1\.1|2\.0)" 501 /.test(l)).length,
        3,
        lines.join('\n'),
      );
    }));
});

describe('CONNECT from a client that resets at once', () => {
  it('costs the server nothing: no crash, no socket left, the next request served', async () => {
    const s = await startServer(`global:\n  wwwroot: ${www}\n`);
    try {
      const { connect } = await import('node:net');
      for (let i = 0; i < 50; i++) {
        const socket = connect(s.port, '127.0.0.1', () => {
          socket.write('CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\n\r\n');
          // A reset, not a FIN: the answer meets ECONNRESET or EPIPE.
          setImmediate(() => socket.resetAndDestroy());
        });
        socket.on('error', () => undefined);
        await new Promise((resolve) => socket.once('close', resolve));
      }
      assert.match(
        await raw(s.port, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'),
        /^HTTP\/1\.1 200 OK\r\n/,
      );
      await until(() => s.server.connectionsActive === 0, { what: 'no connection left' });
    } finally {
      await s.close();
    }
  });
});

describe('Host', () => {
  it("an HTTP/1.1 request without Host gets Portico's 400; HTTP/1.0 without Host is served", async () => {
    const s = await startServer(`global:\n  wwwroot: ${www}\n`);
    try {
      const missing = await raw(s.port, 'GET / HTTP/1.1\r\nConnection: close\r\n\r\n');
      assert.match(missing, /^HTTP\/1\.1 400 Bad Request\r\n/);
      assert.match(missing, /\r\nServer: Portico\r\n/i);
      assert.match(
        await raw(s.port, 'GET / HTTP/1.0\r\n\r\n'),
        /^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nhello$/,
      );
    } finally {
      await s.close();
    }
  });
});

describe('the host of an HTTP/2 request', () => {
  it('is its :authority, even beside a Host field naming another (RFC 9113 §8.3.1)', async () => {
    const sport = await freePort();
    const s = await startServer(
      `global:\n  sport: "127.0.0.1:${sport}"\n  secure: true\n  cert: ${SERVER_CERT}\n  key: ${SERVER_KEY}\n  wwwroot: ${www}\nhosts:\n  - domain: a.test\n    customHeaders:\n      X-Site: a\n  - domain: b.test\n    customHeaders:\n      X-Site: b\n`,
    );
    try {
      const session = http2Connect(`https://localhost:${sport}`, {
        ca: CA,
        host: '127.0.0.1',
      } as never);
      const site = (headers: Record<string, string>) =>
        new Promise<unknown>((resolve, reject) => {
          const stream = session.request({ ':path': '/', ...headers });
          stream.on('response', (h) => resolve(h['x-site'])).on('error', reject);
          stream.resume();
        });
      assert.equal(await site({ ':authority': 'a.test', host: 'b.test' }), 'a');
      assert.equal(await site({ ':authority': 'b.test' }), 'b');
      session.close();
    } finally {
      await s.close();
    }
  });
});

describe('requests Node’s parser or TLS refuses', () => {
  it('plain HTTP sent to the HTTPS port gets a 400 that says so; a target too long a 414, too many fields a 431', async () => {
    const sport = await freePort();
    const s = await startServer(
      `global:\n  sport: "127.0.0.1:${sport}"\n  secure: true\n  cert: ${SERVER_CERT}\n  key: ${SERVER_KEY}\n  wwwroot: ${www}\n  logFilePath: ${join(root, 'refused.log')}\n`,
    );
    try {
      const plain = await raw(sport, 'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
      assert.match(plain, /^HTTP\/1\.1 400 Bad Request\r\n/);
      assert.match(plain, /This port speaks HTTPS/);
      const long = await raw(s.port, `GET /${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
      assert.match(long, /^HTTP\/1\.1 414 URI Too Long\r\n/);
      const fields = await raw(
        s.port,
        `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`,
      );
      assert.match(fields, /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    } finally {
      await s.close();
    }
    const lines = readFileSync(join(root, 'refused.log'), 'utf8').trim().split('\n');
    assert.deepEqual(
      lines.map((l) => / (\d{3}) 0 "-" "-"$/.exec(l)?.[1]),
      ['400', '414', '431'],
      lines.join('\n').slice(0, 500),
    );
  });
});
