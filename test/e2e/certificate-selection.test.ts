// Which certificate a client gets (issue 16 point 1): every name its own certificate whatever the
// key types (Node's SNICallback alone served an ECDSA default to a client asking for an RSA sni
// name), a name listed in a certificate's subjectAltName without an sni entry, and secure with only
// sni certificates. Certificates are made here with openssl, signed by one CA, and checked by
// Node's TLS client, openssl s_client and curl, each verifying the chain and the name.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { connect as netConnect, createServer as createNetServer, type AddressInfo } from 'node:net';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, describe, it } from 'node:test';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { loadConfigText } from '../../src/config/load.js';
import { formatDiagnostic } from '../../src/config/diagnostics.js';
import { configChecks } from '../../src/server/config-checks.js';
import { certificateProblems } from '../../src/tls/certificate-check.js';
import { freePort, startServer } from '../helpers/server.js';
import { makeTestCa } from '../helpers/tls.js';

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'portico-certs-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const ca = makeTestCa(dir);
const CA = ca.file;
const certs = {
  rsa: {
    default: ca.leaf('default-rsa', { type: 'rsa', names: ['default.test'] }),
    named: ca.leaf('named-rsa', { type: 'rsa', names: ['named.test', 'extra.test'] }),
  },
  ec: {
    default: ca.leaf('default-ec', { names: ['default.test'] }),
    named: ca.leaf('named-ec', { names: ['named.test', 'extra.test'] }),
  },
};
const caPem = ca.pem;

async function serve(yaml: string) {
  const sport = await freePort();
  const s = await startServer(`global:\n  sport: "127.0.0.1:${sport}"\n  secure: true\n${yaml}`);
  return { s, sport };
}

/** The CN and key type a Node client gets for `servername` (undefined: send no SNI). */
function handshake(
  port: number,
  servername: string | undefined,
  options: ConnectionOptions = {},
): Promise<{ cn: string; keyType: string }> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect(
      {
        host: '127.0.0.1',
        port,
        ca: caPem,
        ...(servername === undefined ? { servername: '' } : { servername }),
        // With no name sent there is no name to check: the chain is still verified.
        checkServerIdentity: () => undefined,
        ...options,
      },
      () => {
        const cert = socket.getPeerX509Certificate();
        socket.end();
        resolve({
          cn: /CN=(.*)/.exec(cert?.subject ?? '')?.[1] ?? '',
          keyType: cert?.publicKey.asymmetricKeyType ?? '',
        });
      },
    );
    socket.on('error', reject);
  });
}

/** The subject openssl s_client is served, with the chain and the name verified. */
async function sClient(port: number, name: string, version: string): Promise<string> {
  const { stdout } = await run('sh', [
    '-c',
    `echo | openssl s_client -connect 127.0.0.1:${port} -servername ${name} -${version} -CAfile ${CA} -verify_hostname ${name} -verify_return_error 2>&1`,
  ]);
  assert.match(stdout, /Verify return code: 0 \(ok\)/, stdout);
  return /^subject=(.*)$/m.exec(stdout)?.[1]?.trim() ?? '';
}

/** curl, verifying as browsers do; resolves with the body. */
async function curl(port: number, name: string): Promise<string> {
  const { stdout } = await run('curl', [
    '-sS',
    '--cacert',
    CA,
    '--resolve',
    `${name}:${port}:127.0.0.1`,
    `https://${name}:${port}/`,
  ]);
  return stdout;
}

describe('certificate selection', () => {
  for (const defaultType of ['ec', 'rsa'] as const) {
    for (const namedType of ['ec', 'rsa'] as const) {
      it(`serves an ${namedType.toUpperCase()} sni certificate beside an ${defaultType.toUpperCase()} default, TLS 1.2 and 1.3`, async (t) => {
        const d = certs[defaultType].default;
        const n = certs[namedType].named;
        const { s, sport } = await serve(
          `  cert: ${d.cert}\n  key: ${d.key}\n  sni:\n    named.test:\n      cert: ${n.cert}\n      key: ${n.key}\n`,
        );
        t.after(() => s.close());
        const keyType = { rsa: 'rsa', ec: 'ec' }[namedType];
        for (const maxVersion of ['TLSv1.2', 'TLSv1.3'] as const) {
          assert.deepEqual(await handshake(sport, 'named.test', { maxVersion }), {
            cn: 'named.test',
            keyType,
          });
          assert.equal((await handshake(sport, undefined, { maxVersion })).cn, 'default.test');
        }
        for (const version of ['tls1_2', 'tls1_3'])
          assert.match(await sClient(sport, 'named.test', version), /CN ?= ?named\.test/);
        assert.match(await sClient(sport, 'default.test', 'tls1_3'), /CN ?= ?default\.test/);
        assert.equal(await curl(sport, 'named.test'), await curl(sport, 'default.test'));
      });
    }
  }

  it('gives a name listed in a certificate’s subjectAltName that certificate, without an sni entry', async (t) => {
    const d = certs.ec.default;
    const n = certs.rsa.named;
    const { s, sport } = await serve(
      `  cert: ${d.cert}\n  key: ${d.key}\n  sni:\n    named.test:\n      cert: ${n.cert}\n      key: ${n.key}\n`,
    );
    t.after(() => s.close());
    assert.equal((await handshake(sport, 'extra.test')).cn, 'named.test');
    assert.match(await sClient(sport, 'extra.test', 'tls1_3'), /CN ?= ?named\.test/);
    // A name nothing covers gets the default.
    assert.equal((await handshake(sport, 'other.test')).cn, 'default.test');
  });

  it('runs HTTPS with sni certificates only: a client that names no server gets the first', async (t) => {
    const a = certs.ec.named;
    const b = certs.rsa.default;
    const { s, sport } = await serve(
      `  sni:\n    named.test:\n      cert: ${a.cert}\n      key: ${a.key}\n    default.test:\n      cert: ${b.cert}\n      key: ${b.key}\n`,
    );
    t.after(() => s.close());
    assert.equal((await handshake(sport, undefined)).cn, 'named.test');
    assert.equal((await handshake(sport, 'default.test')).cn, 'default.test');
    assert.equal(await curl(sport, 'default.test'), await curl(sport, 'named.test'));
  });

  it('reads a ClientHello that arrives in pieces', async (t) => {
    const d = certs.ec.default;
    const n = certs.rsa.named;
    const { s, sport } = await serve(
      `  cert: ${d.cert}\n  key: ${d.key}\n  sni:\n    named.test:\n      cert: ${n.cert}\n      key: ${n.key}\n`,
    );
    t.after(() => s.close());
    // A relay that passes what the client sends on in 7-byte writes, one per turn of the event
    // loop, which the server (in this process) reads in between.
    const relay = createNetServer((client) => {
      const upstream = netConnect(sport, '127.0.0.1');
      upstream.setNoDelay(true);
      let queue = Promise.resolve();
      client.on('data', (data: Buffer) => {
        for (let at = 0; at < data.length; at += 7) {
          const piece = data.subarray(at, at + 7);
          queue = queue.then(nextTurn).then(() => void upstream.write(piece));
        }
      });
      upstream.pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
    });
    relay.listen(0, '127.0.0.1');
    await once(relay, 'listening');
    t.after(() => relay.close());
    const relayPort = (relay.address() as AddressInfo).port;
    assert.deepEqual(await handshake(relayPort, 'named.test'), {
      cn: 'named.test',
      keyType: 'rsa',
    });
  });

  it('keeps choosing by name after a reload swaps the certificates', async (t) => {
    const d = certs.ec.default;
    const { s, sport } = await serve(`  cert: ${d.cert}\n  key: ${d.key}\n`);
    t.after(() => s.close());
    assert.equal((await handshake(sport, 'named.test')).cn, 'default.test');
    const n = certs.rsa.named;
    s.rewrite(
      `global:\n  sport: "127.0.0.1:${sport}"\n  secure: true\n  cert: ${d.cert}\n  key: ${d.key}\n  sni:\n    named.test:\n      cert: ${n.cert}\n      key: ${n.key}\n`,
    );
    assert.equal((await s.server.reloadFromSource()).ok, true);
    assert.deepEqual(await handshake(sport, 'named.test'), { cn: 'named.test', keyType: 'rsa' });
  });
});

describe('validate', () => {
  const warningsOf = (yaml: string) =>
    loadConfigText(yaml, 'yaml', 'portico.yaml', { checks: configChecks() })
      .diagnostics.filter((d) => d.severity === 'warning')
      .map(formatDiagnostic);

  it('warns about an sni name the certificate does not cover, at the entry’s cert line', () => {
    const n = certs.ec.named;
    const file = join(dir, 'portico.yaml');
    writeFileSync(file, '');
    assert.deepEqual(
      warningsOf(
        `global:\n  secure: true\n  sni:\n    shop.test:\n      cert: ${n.cert}\n      key: ${n.key}\n    "*.named.test":\n      cert: ${n.cert}\n      key: ${n.key}\n    named.test:\n      cert: ${n.cert}\n      key: ${n.key}\n`,
      ),
      [
        `portico.yaml:5:7: warning: global.sni.shop.test.cert: the certificate ${n.cert} does not cover shop.test (it names named.test, extra.test)`,
        `portico.yaml:8:7: warning: global.sni.*.named.test.cert: the certificate ${n.cert} does not cover *.named.test (it names named.test, extra.test)`,
      ],
    );
  });

  it('warns about a certificate out of its validity period', () => {
    const cert = new X509Certificate(readFileSync(certs.ec.named.cert));
    const day = 86_400_000;
    assert.deepEqual(certificateProblems(cert, 'x.crt', 'named.test'), []);
    assert.match(
      certificateProblems(cert, 'x.crt', undefined, Date.now() + 5 * day)[0]!,
      /^the certificate x\.crt expired on 20\d\d-/,
    );
    assert.match(
      certificateProblems(cert, 'x.crt', undefined, Date.now() - 5 * day)[0]!,
      /^the certificate x\.crt is not valid before 20\d\d-/,
    );
  });
});
