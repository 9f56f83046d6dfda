// Which certificate a connection starts with (src/server/certificate-contexts.ts), both ways it can
// be chosen: the server's default context set for one hand-over (Node's private `_sharedCreds`,
// node-internals.ts), and the public setSecureContext when that self-test fails, forced here. Both
// must give every name its own certificate whatever the key types, in any order of connections.
// Plain HTTP sent to the port is told to use HTTPS, read before any TLS.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, describe, it } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { usePrivateApis, usePublicApi } from '../../src/http/node-internals.js';
import { freePort, startServer } from '../helpers/server.js';
import { makeTestCa } from '../helpers/tls.js';

const dir = mkdtempSync(join(tmpdir(), 'portico-contexts-'));
after(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => usePrivateApis());

const ca = makeTestCa(dir);
const ecDefault = ca.leaf('default-ec', { names: ['default.test'] });
const rsaNamed = ca.leaf('named-rsa', { type: 'rsa', names: ['named.test'] });
const rsaDefault = ca.leaf('default-rsa', { type: 'rsa', names: ['default.test'] });
const ecNamed = ca.leaf('named-ec', { names: ['named.test'] });

async function serve(main: { cert: string; key: string }, named: { cert: string; key: string }) {
  const sport = await freePort();
  const s = await startServer(
    `global:\n  sport: "127.0.0.1:${sport}"\n  secure: true\n  cert: ${main.cert}\n  key: ${main.key}\n` +
      `  sni:\n    named.test:\n      cert: ${named.cert}\n      key: ${named.key}\n`,
  );
  return { s, sport };
}

/** The CN and key type served for `servername` (undefined: no SNI), the chain verified. */
function handshake(port: number, servername: string | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect(
      {
        host: '127.0.0.1',
        port,
        ca: ca.pem,
        servername: servername ?? '',
        checkServerIdentity: () => undefined,
      },
      () => {
        const cert = socket.getPeerX509Certificate();
        socket.end();
        const cn = /CN=(.*)/.exec(cert?.subject ?? '')?.[1];
        resolve(`${cn} ${cert?.publicKey.asymmetricKeyType}`);
      },
    );
    socket.on('error', reject);
  });
}

for (const way of ['Node’s default context set per connection', 'setSecureContext (forced)']) {
  describe(way, () => {
    const force = () => {
      if (way.startsWith('setSecureContext')) usePublicApi('context-swap');
    };

    for (const [main, named, mainType, namedType] of [
      [ecDefault, rsaNamed, 'ec', 'rsa'],
      [rsaDefault, ecNamed, 'rsa', 'ec'],
    ] as const) {
      it(`serves an ${namedType} sni certificate beside an ${mainType} default, in any order`, async (t) => {
        force();
        const { s, sport } = await serve(main, named);
        t.after(() => s.close());
        for (const name of ['named.test', undefined, 'named.test', 'named.test', 'other.test'])
          assert.equal(
            await handshake(sport, name),
            name === 'named.test' ? `named.test ${namedType}` : `default.test ${mainType}`,
          );
      });
    }
  });
}

describe('plain HTTP sent to the HTTPS port', () => {
  it('is answered in plain HTTP, however its first bytes arrive', async (t) => {
    const { s, sport } = await serve(ecDefault, rsaNamed);
    t.after(() => s.close());
    for (const pieces of [['GET / HTTP/1.1\r\nHost: a\r\n\r\n'], ['G', 'ET / HTTP/1.1\r\n\r\n']]) {
      const socket = netConnect(sport, '127.0.0.1');
      let answer = '';
      socket.setEncoding('latin1').on('data', (d: string) => (answer += d));
      for (const piece of pieces) {
        socket.write(piece);
        // Written apart, as a client may; the server waits for a record header's five bytes.
        await new Promise((resolve) => setImmediate(resolve));
      }
      await once(socket, 'close');
      assert.match(answer, /^HTTP\/1\.1 400 Bad Request\r\n/);
      assert.match(answer, /This port speaks HTTPS/);
    }
  });

  it('is not what a TLS client’s hello is taken for', async (t) => {
    const { s, sport } = await serve(ecDefault, rsaNamed);
    t.after(() => s.close());
    assert.equal(await handshake(sport, 'named.test'), 'named.test rsa');
  });
});
