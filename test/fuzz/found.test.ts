// What the fuzzing found outside the configuration loader, each as one fixed example. The faults are
// in the server, not fixed by the fuzzing work: these tests are marked todo (run and reported, not
// failing the suite) until the fix lands, when the mark comes off.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { freePort } from '../helpers/server.js';
import { until } from '../helpers/wait.js';
import { spawnPortico, type PorticoProcess } from '../security/portico-process.js';
import { exchange, parseReplies } from './http1-wire.js';
import { h2TlsOptions, SERVER_CERT, SERVER_KEY } from '../helpers/tls.js';

const UPGRADE_BODY =
  "Node hands every request with 'Connection: upgrade' to the 'upgrade' listener (src/server/listener.ts) with its body as the new protocol's first bytes; served as a plain request, it reaches the backend without them";
const H2_LEFT_OPEN =
  'after a connection error Node sends GOAWAY but keeps the TCP connection, which RFC 9113 §5.4.1 says to close: the socket stays until the session watch (src/server/http2-sessions.ts) destroys it, 45 s later';

describe('found by fuzzing', () => {
  let server: PorticoProcess;
  let sport: number;
  let root: string;
  let backend: http.Server;
  /** The bodies the backend received, by path. */
  const bodies = new Map<string, string>();

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'portico-fuzz-found-'));
    writeFileSync(join(root, 'index.html'), 'the index\n');
    backend = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('latin1').on('data', (d: string) => (body += d));
      req.on('end', () => {
        bodies.set(req.url ?? '', body);
        res.end('ok');
      });
    });
    backend.listen(0, '127.0.0.1');
    await once(backend, 'listening');
    sport = await freePort();
    server = await spawnPortico(
      `global:
  loadModules: [rproxy]
  wwwroot: ${root}
  disableToHTTPSRedirect: true
  secure: true
  sport: "127.0.0.1:${sport}"
  cert: ${SERVER_CERT}
  key: ${SERVER_KEY}
hosts:
  - domain: localhost
    locations:
      - path: /echo
        proxyTo: http://127.0.0.1:${(backend.address() as AddressInfo).port}
`,
    );
  });

  after(async () => {
    // A short grace: the HTTP/2 example below, while it fails, leaves a request in flight that a
    // graceful stop would wait its whole shutdownTimeout for.
    await server?.stop(2000);
    backend?.closeAllConnections();
    backend?.close();
    rmSync(root, { recursive: true, force: true });
  });

  /** The replies to `bytes` sent at once on one connection, read until the server closes it. */
  async function replies(bytes: string) {
    // Half-closed only after a while: a client that half-closes at once is taken to have gone.
    const { data } = await exchange(server.port, [Buffer.from(bytes, 'latin1')], {
      endAfterMs: 500,
    });
    return { text: data.toString('latin1'), parsed: parseReplies(data) };
  }

  it('answers a request before a malformed one that follows it', async () => {
    const { parsed, text } = await replies(
      'GET /index.html HTTP/1.1\r\nHost: localhost\r\n\r\nX\r\n\r\n',
    );
    assert.equal(parsed[0]?.status, 200, text);
    assert.equal(parsed[0]?.body.toString(), 'the index\n');
  });

  it('writes nothing after a response that closes the connection', async () => {
    const { parsed, text } = await replies(
      'GET /index.html HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\nX',
    );
    assert.deepEqual(
      parsed.map((r) => r.status),
      [200],
      text,
    );
  });

  for (const upgrade of ['h2c', 'websocket'])
    it(
      `forwards the body of a request that asks to upgrade to ${upgrade}`,
      { todo: UPGRADE_BODY },
      async () => {
        const { parsed, text } = await replies(
          `POST /echo/${upgrade} HTTP/1.1\r\nHost: localhost\r\nUpgrade: ${upgrade}\r\nConnection: Upgrade\r\nContent-Length: 5\r\n\r\nhello`,
        );
        // Refusing the upgrade is allowed; forwarding the request without its body is not.
        if (bodies.has(`/echo/${upgrade}`)) assert.equal(bodies.get(`/echo/${upgrade}`), 'hello');
        else assert.ok(parsed[0] && parsed[0].status >= 400, text);
      },
    );

  it(
    'gives back the socket of an HTTP/2 session that broke the protocol once its client has left',
    { todo: H2_LEFT_OPEN },
    async () => {
      const base = server.fds();
      const frame = (type: number, flags: number, stream: number, payload: Buffer) => {
        const head = Buffer.alloc(9);
        head.writeUIntBE(payload.length, 0, 3);
        head[3] = type;
        head[4] = flags;
        head.writeUInt32BE(stream, 5);
        return Buffer.concat([head, payload]);
      };
      const literal = (name: string, value: string) =>
        Buffer.concat([
          Buffer.from([0, name.length]),
          Buffer.from(name),
          Buffer.from([value.length]),
          Buffer.from(value),
        ]);
      const headers = Buffer.concat([
        literal(':method', 'POST'),
        literal(':scheme', 'https'),
        literal(':path', '/index.html'),
        literal(':authority', 'localhost'),
      ]);
      const socket = tlsConnect(h2TlsOptions(sport));
      try {
        await once(socket, 'secureConnect');
        socket.write(
          Buffer.concat([
            Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'),
            frame(0x4, 0, 0, Buffer.alloc(0)),
            // A request whose body is still to come, then a DATA frame past the 16,384-byte maximum.
            frame(0x1, 0x4, 1, headers),
            frame(0x0, 0, 1, Buffer.alloc(16_390)),
          ]),
        );
        // The server's GOAWAY (FRAME_SIZE_ERROR) ends the exchange.
        let received = Buffer.alloc(0);
        read: for await (const chunk of socket as AsyncIterable<Buffer>) {
          received = Buffer.concat([received, chunk]);
          while (received.length >= 9 && received.length >= 9 + received.readUIntBE(0, 3)) {
            if (received[3] === 0x7) break read;
            received = received.subarray(9 + received.readUIntBE(0, 3));
          }
        }
      } finally {
        socket.destroy();
      }
      await until(() => server.fds(), {
        ok: (n) => n <= base,
        ms: 3000,
        what: `descriptors back to ${base} within 3 s of the client leaving`,
      });
    },
  );
});
