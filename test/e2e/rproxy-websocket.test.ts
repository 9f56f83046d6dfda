// WebSocket through the reverse proxy, with `ws` on both ends as real peers: the backend's own 101
// is relayed (never one before it agrees), its refusal reaches the client as a normal response,
// frames flow both ways, and either side closing closes the other with nothing left open.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import { connect as http2Connect } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import WebSocket, { WebSocketServer } from 'ws';
import { freePort, startServer, type RunningServer } from '../helpers/server.js';
import { SERVER_CERT, SERVER_KEY, TEST_CA } from '../helpers/tls.js';
import { until } from '../helpers/wait.js';

interface Backend {
  readonly url: string;
  readonly server: WebSocketServer;
  readonly handshakes: IncomingMessage[];
}

/** An echo server on 127.0.0.1 that refuses paths with /refuse in them with 403; closed when the test ends. */
async function wsBackend(t: TestContext): Promise<Backend> {
  const handshakes: IncomingMessage[] = [];
  // An HTTP server of its own, so the end of the test can close its keep-alive connections too
  // (the proxy's pool keeps one open after a refusal).
  const http = createServer();
  const server = new WebSocketServer({
    server: http,
    handleProtocols: (protocols) => (protocols.has('chat') ? 'chat' : false),
    verifyClient: ({ req }, done) => {
      handshakes.push(req);
      if (req.url?.includes('/refuse')) done(false, 403, 'not here');
      else done(true);
    },
  });
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  server.on('connection', (socket, req) => {
    socket.on('message', (data, binary) =>
      socket.send(binary ? data : `echo ${data.toString()} ${req.url}`, { binary }),
    );
  });
  t.after(() => {
    for (const client of server.clients) client.terminate();
    server.close();
    http.closeAllConnections();
    return new Promise<void>((resolve) => http.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`, server, handshakes };
}

async function proxy(t: TestContext, backend: Backend): Promise<RunningServer> {
  const s = await startServer(
    `global:\n  loadModules: [rproxy]\nhosts:\n  - domain: localhost\n    locations:\n      - path: /ws\n        proxyTo: ${backend.url}/base\n`,
  );
  t.after(() => s.close());
  return s;
}

function connect(port: number, path: string, protocols: string[] = []): WebSocket {
  return new WebSocket(`ws://localhost:${port}${path}`, protocols);
}

describe('rproxy: WebSocket', () => {
  it('relays the backend’s 101 and frames both ways, with the subprotocol it chose', async (t) => {
    const b = await wsBackend(t);
    const s = await proxy(t, b);
    const client = connect(s.port, '/ws/room?x=1', ['chat', 'other']);
    const opened = once(client, 'open');
    const [response] = (await once(client, 'upgrade')) as [IncomingMessage];
    await opened;
    assert.equal(client.protocol, 'chat');
    assert.equal(response.headers.server, 'Portico');
    client.send('hello');
    const [text] = (await once(client, 'message')) as [Buffer];
    assert.equal(text.toString(), 'echo hello /base/ws/room?x=1');
    const big = Buffer.alloc(1024 * 1024, 7);
    client.send(big);
    const [echoed] = (await once(client, 'message')) as [Buffer];
    assert.ok(Buffer.compare(echoed, big) === 0, 'a 1 MiB binary frame comes back intact');
    const handshake = b.handshakes[0]!;
    assert.equal(handshake.headers['x-forwarded-for'], '127.0.0.1');
    assert.equal(handshake.headers.host, b.url.slice('http://'.length));
    client.close();
    await once(client, 'close');
  });

  it('relays a refusal as a normal response, without a 101 first', async (t) => {
    const b = await wsBackend(t);
    const s = await proxy(t, b);
    const client = connect(s.port, '/ws/refuse/x');
    client.on('error', () => undefined);
    const [, response] = (await once(client, 'unexpected-response')) as [unknown, IncomingMessage];
    assert.equal(response.statusCode, 403);
    assert.equal(b.handshakes.length, 1, 'the backend was asked first');
    response.resume();
    client.terminate();
    assert.equal(b.server.clients.size, 0);
  });

  it('answers an upgrade where nothing proxies as a normal request', async (t) => {
    const b = await wsBackend(t);
    const s = await proxy(t, b);
    const client = connect(s.port, '/elsewhere');
    client.on('error', () => undefined);
    const [, response] = (await once(client, 'unexpected-response')) as [unknown, IncomingMessage];
    assert.equal(response.statusCode, 404);
    response.resume();
    client.terminate();
  });

  it('closes the client when the backend goes, and the backend when the client goes; nothing stays open', async (t) => {
    const b = await wsBackend(t);
    const s = await proxy(t, b);
    const first = connect(s.port, '/ws/a');
    await once(first, 'open');
    for (const peer of b.server.clients) peer.terminate();
    const [code] = (await once(first, 'close')) as [number];
    assert.equal(
      code,
      1006,
      'the connection ended without a closing handshake, as the backend’s did',
    );

    const second = connect(s.port, '/ws/b');
    await once(second, 'open');
    await until(() => b.server.clients.size === 1, { what: 'the backend side open' });
    second.terminate();
    await until(() => b.server.clients.size === 0, { what: 'the backend side closed' });
    await until(() => s.server.connectionsActive === 0, { what: 'no client connection left' });
  });

  it('bridges an HTTP/2 extended CONNECT (RFC 8441) to the backend’s HTTP/1.1 upgrade', async (t) => {
    const b = await wsBackend(t);
    const sport = await freePort();
    const s = await startServer(
      `global:\n  loadModules: [rproxy]\n  secure: true\n  sport: "127.0.0.1:${sport}"\n  cert: ${SERVER_CERT}\n  key: ${SERVER_KEY}\n  http2Settings:\n    enableConnectProtocol: true\n  proxyTo: ${b.url}/base\n`,
    );
    t.after(() => s.close());
    const session = http2Connect(`https://localhost:${sport}`, {
      ca: TEST_CA,
    });
    t.after(() => session.destroy());
    const [settings] = (await once(session, 'remoteSettings')) as [
      { enableConnectProtocol?: boolean },
    ];
    assert.equal(settings.enableConnectProtocol, true);
    const stream = session.request({
      ':method': 'CONNECT',
      ':protocol': 'websocket',
      ':scheme': 'https',
      ':path': '/ws/h2',
      ':authority': `localhost:${sport}`,
      'sec-websocket-version': '13',
      'sec-websocket-protocol': 'chat',
    });
    const [headers] = (await once(stream, 'response')) as [Record<string, string>];
    assert.equal(headers[':status'], 200);
    assert.equal(headers['sec-websocket-protocol'], 'chat');
    assert.equal(
      headers['sec-websocket-accept'],
      undefined,
      'RFC 8441 §5: no Sec-WebSocket-Accept',
    );
    stream.write(maskedText('hello'));
    const [frame] = (await once(stream, 'data')) as [Buffer];
    assert.equal(unmaskedText(frame), 'echo hello /base/ws/h2');
    assert.equal(b.handshakes[0]?.headers['x-forwarded-proto'], 'https');
    stream.close();
    await until(() => b.server.clients.size === 0, {
      what: 'closing the stream to close the backend connection',
    });
  });
});

/** A client's text frame (RFC 6455 §5.2: masked), payload under 126 bytes. */
function maskedText(text: string): Buffer {
  const payload = Buffer.from(text);
  const mask = randomBytes(4);
  return Buffer.concat([
    Buffer.from([0x81, 0x80 | payload.length]),
    mask,
    payload.map((byte, i) => byte ^ mask[i % 4]!),
  ]);
}

/** A server's text frame (unmasked), payload under 126 bytes. */
function unmaskedText(frame: Buffer): string {
  assert.equal(frame[0], 0x81, 'a final text frame');
  return frame.subarray(2, 2 + (frame[1]! & 0x7f)).toString();
}
