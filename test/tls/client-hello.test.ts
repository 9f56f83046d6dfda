// The ClientHello reader that chooses a connection's certificate: real hellos from Node's TLS
// client (TLS 1.2 and 1.3, with and without a name), read whole, cut short and mangled.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { MAX_HELLO_BYTES, readClientHello } from '../../src/tls/client-hello.js';

/** The first bytes a real TLS client sends. */
async function helloOf(options: ConnectionOptions): Promise<Buffer> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const [[socket]] = await Promise.all([
    once(server, 'connection'),
    (async () => {
      const client = tlsConnect({
        host: '127.0.0.1',
        port: (server.address() as AddressInfo).port,
        ...options,
      });
      client.on('error', () => undefined);
    })(),
  ]);
  const [data] = (await once(socket, 'data')) as [Buffer];
  socket.destroy();
  server.close();
  return data;
}

describe('readClientHello', () => {
  it('finds the name of TLS 1.2 and 1.3 hellos, and none when the client sends none', async () => {
    for (const maxVersion of ['TLSv1.2', 'TLSv1.3'] as const) {
      const named = await helloOf({ servername: 'Shop.Example.COM', maxVersion });
      assert.deepEqual(readClientHello(named), { complete: true, name: 'Shop.Example.COM' });
      assert.deepEqual(readClientHello(await helloOf({ servername: '', maxVersion })), {
        complete: true,
      });
    }
  });

  it('reads the ALPN protocols offered (TLS-ALPN-01 offers only acme-tls/1)', async () => {
    assert.deepEqual(
      readClientHello(await helloOf({ servername: 'a.test', ALPNProtocols: ['acme-tls/1'] })),
      { complete: true, name: 'a.test', alpn: ['acme-tls/1'] },
    );
    assert.deepEqual(
      readClientHello(await helloOf({ servername: 'a.test', ALPNProtocols: ['h2', 'http/1.1'] })),
      { complete: true, name: 'a.test', alpn: ['h2', 'http/1.1'] },
    );
  });

  it('waits for a hello cut short, at any byte', async () => {
    const hello = await helloOf({ servername: 'example.com' });
    for (let cut = 0; cut < hello.length; cut++)
      assert.deepEqual(
        readClientHello(hello.subarray(0, cut)),
        { complete: false },
        `cut at ${cut}`,
      );
  });

  it('gives up, without a name, on what is not a TLS hello or is malformed', async () => {
    assert.deepEqual(readClientHello(Buffer.from('GET / HTTP/1.1\r\n')), { complete: true });
    const hello = await helloOf({ servername: 'example.com' });
    // A handshake message that is not a ClientHello, and lengths that point past the record.
    const notHello = Buffer.from(hello);
    notHello[5] = 2;
    assert.deepEqual(readClientHello(notHello), { complete: true });
    const mangled = Buffer.from(hello);
    mangled.writeUInt16BE(0xffff, 5 + 4 + 2 + 32 + 1 + mangled[5 + 4 + 2 + 32]!);
    assert.deepEqual(readClientHello(mangled), { complete: true });
    // A record longer than the bound is not waited for.
    const huge = Buffer.alloc(MAX_HELLO_BYTES);
    huge.set([0x16, 3, 1, 0xff, 0xff]);
    assert.deepEqual(readClientHello(huge), { complete: true });
  });
});
