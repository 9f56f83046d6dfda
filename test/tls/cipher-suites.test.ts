import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import tls from 'node:tls';

import {
  CIPHER_SUITES,
  ECDH_CURVES,
  findCipherSuite,
  findCurve,
  suggestCipherSuite,
} from '../../src/config/tls-names.js';
import { cipherOptions, DEFAULT_CIPHER_SUITES } from '../../src/tls/cipher-suites.js';

const TLS12 = CIPHER_SUITES.filter((s) => !s.tls13);
const TLS13 = CIPHER_SUITES.filter((s) => s.tls13);

describe('cipher suite names', () => {
  it('every TLS 1.2 OpenSSL name is accepted by createSecureContext({ ciphers }) on its own', () => {
    for (const suite of TLS12) {
      assert.doesNotThrow(() => tls.createSecureContext({ ciphers: suite.openssl }), suite.openssl);
    }
  });

  it('every TLS 1.3 name is accepted by createSecureContext({ ciphers }), which passes TLS_ names to TLS 1.3', () => {
    for (const suite of TLS13) {
      assert.doesNotThrow(() => tls.createSecureContext({ ciphers: suite.iana }), suite.iana);
    }
  });

  it('OpenSSL really rejects what is not a cipher, so the two checks above mean something', () => {
    assert.throws(
      () => tls.createSecureContext({ ciphers: 'ECDHE-RSA-AES128-GCM-SHA512' }),
      /no cipher match/,
    );
    assert.throws(
      () => tls.createSecureContext({ ciphers: 'TLS_AES_512_GCM_SHA256' }),
      /no cipher match/,
    );
  });

  it('covers every forward-secret GCM/ChaCha20 and ECDHE AES-CBC suite this OpenSSL offers', () => {
    const aead = /^(ecdhe-(ecdsa|rsa)|dhe-rsa)-(aes\d+-gcm-sha\d+|chacha20-poly1305)$/;
    const cbc = /^ecdhe-(ecdsa|rsa)-aes\d+-sha(256|384)?$/;
    const offered = tls.getCiphers().filter((name) => aead.test(name) || cbc.test(name));
    assert.ok(offered.length >= 17, `only ${offered.length} matched; has the naming changed?`);
    for (const name of offered)
      assert.ok(findCipherSuite(name), `${name} is missing from CIPHER_SUITES`);
    for (const suite of TLS13)
      assert.ok(tls.getCiphers().includes(suite.iana.toLowerCase()), suite.iana);
  });

  it('has no name twice', () => {
    const names = CIPHER_SUITES.flatMap((s) => (s.tls13 ? [s.iana] : [s.iana, s.openssl]));
    assert.equal(new Set(names).size, names.length);
  });

  it('finds a suite by either name, in any case', () => {
    const suite = findCipherSuite('TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256');
    assert.equal(suite?.openssl, 'ECDHE-RSA-AES128-GCM-SHA256');
    assert.equal(findCipherSuite('ecdhe-rsa-aes128-gcm-sha256'), suite);
    assert.equal(findCipherSuite('tls_ecdhe_rsa_with_aes_128_gcm_sha256'), suite);
    assert.deepEqual(findCipherSuite('tls_aes_128_gcm_sha256'), {
      iana: 'TLS_AES_128_GCM_SHA256',
      openssl: 'TLS_AES_128_GCM_SHA256',
      tls13: true,
    });
  });

  it('does not know suites outside the table or made-up names', () => {
    const unknown = [
      'AES128-GCM-SHA256',
      'TLS_RSA_WITH_AES_128_GCM_SHA256',
      'RC4-SHA',
      'HIGH',
      '',
      'TLS13_AES_128_GCM_SHA256',
    ];
    for (const name of unknown) assert.equal(findCipherSuite(name), undefined, name);
  });

  it('suggests the nearest IANA name for a typo, and nothing for nonsense', () => {
    assert.equal(suggestCipherSuite('TLS13_AES_128_GCM_SHA256'), 'TLS_AES_128_GCM_SHA256');
    assert.equal(
      suggestCipherSuite('TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA265'),
      'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256',
    );
    assert.equal(
      suggestCipherSuite('ECDHE_RSA_AES256_GCM_SHA384'),
      'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384',
    );
    assert.equal(
      suggestCipherSuite('ecdhe-ecdsa-chacha20-poly305'),
      'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256',
    );
    assert.equal(suggestCipherSuite('banana'), undefined);
  });
});

describe('cipherOptions', () => {
  // Portico's defaults, not Node's (which offer CBC suites for TLS 1.2).
  const defaults = DEFAULT_CIPHER_SUITES.map((name) => findCipherSuite(name)!);
  const defaults13 = defaults.filter((c) => c.tls13).map((c) => c.iana);
  const defaults12 = defaults.filter((c) => !c.tls13).map((c) => c.openssl);

  it('puts TLS 1.3 suites by IANA name and TLS 1.2 suites by OpenSSL name into one ciphers string', () => {
    const names = [
      'tls_chacha20_poly1305_sha256',
      'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384',
      'DHE-RSA-AES128-GCM-SHA256',
    ];
    assert.deepEqual(cipherOptions(names), {
      ciphers:
        'TLS_CHACHA20_POLY1305_SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:DHE-RSA-AES128-GCM-SHA256',
    });
  });

  it("keeps Portico's TLS 1.3 defaults when only TLS 1.2 suites are named, and the reverse (no CBC suite creeps back)", () => {
    assert.deepEqual(cipherOptions(['ECDHE-RSA-AES128-SHA']).ciphers?.split(':'), [
      ...defaults13,
      'ECDHE-RSA-AES128-SHA',
    ]);
    assert.deepEqual(cipherOptions(['TLS_AES_128_CCM_SHA256']).ciphers?.split(':'), [
      'TLS_AES_128_CCM_SHA256',
      ...defaults12,
    ]);
    assert.ok(defaults13.length > 0 && defaults12.length > 0);
    assert.ok(!defaults12.some((c) => /CBC|-SHA$/.test(c)), defaults12.join(':'));
  });

  it('gives no option for an empty list, drops repeats, and throws on a name validation should have refused', () => {
    assert.deepEqual(cipherOptions([]), {});
    const repeated = [
      'TLS_AES_256_GCM_SHA384',
      'tls_aes_256_gcm_sha384',
      'ECDHE-RSA-AES128-SHA',
      'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA',
    ];
    assert.deepEqual(cipherOptions(repeated), {
      ciphers: 'TLS_AES_256_GCM_SHA384:ECDHE-RSA-AES128-SHA',
    });
    assert.throws(
      () => cipherOptions(['TLS_AES_128_GCM_SHA256', 'NOPE']),
      /Unknown cipher suite "NOPE"/,
    );
  });

  it('produces strings createSecureContext accepts', () => {
    for (const suite of CIPHER_SUITES) tls.createSecureContext(cipherOptions([suite.iana]));
    tls.createSecureContext(cipherOptions(CIPHER_SUITES.map((s) => s.openssl)));
  });
});

describe('ECDH curves', () => {
  it('every curve is accepted by createSecureContext({ ecdhCurve }), alone and all together', () => {
    for (const curve of ECDH_CURVES) {
      assert.doesNotThrow(
        () => tls.createSecureContext({ ecdhCurve: curve.openssl }),
        curve.openssl,
      );
    }
    tls.createSecureContext({ ecdhCurve: ECDH_CURVES.map((c) => c.openssl).join(':') });
    assert.throws(
      () => tls.createSecureContext({ ecdhCurve: 'secp999r1' }),
      /Failed to set ECDH curve/,
    );
  });

  it('finds the OpenSSL name by any name or alias, in any case', () => {
    assert.equal(findCurve('x25519'), 'X25519');
    assert.equal(findCurve('X25519'), 'X25519');
    assert.equal(findCurve('secp256r1'), 'prime256v1');
    assert.equal(findCurve('PRIME256V1'), 'prime256v1');
    assert.equal(findCurve('p-256'), 'prime256v1');
    assert.equal(findCurve('SECP384R1'), 'secp384r1');
    assert.equal(findCurve('P-384'), 'secp384r1');
    assert.equal(findCurve('secp521r1'), 'secp521r1');
    assert.equal(findCurve('p-521'), 'secp521r1');
  });

  it('does not know other curves', () => {
    for (const name of ['x448', 'secp256k1', 'brainpoolP256r1', 'P256', ''])
      assert.equal(findCurve(name), undefined, name);
  });
});

describe('handshakes on 127.0.0.1', () => {
  let dir: string | undefined;
  // An ECDSA and an RSA certificate, so that suites of both kinds can be negotiated.
  let credentials: { key: Buffer[]; cert: Buffer[] } | undefined;

  before(() => {
    try {
      execFileSync('openssl', ['version'], { stdio: 'ignore' });
    } catch {
      if (process.env.CI)
        throw new Error('openssl is needed to make test certificates and CI must have it');
      return;
    }
    const tmp = mkdtempSync(join(tmpdir(), 'portico-cipher-suites-'));
    dir = tmp;
    const make = (name: string, keyArgs: string[]): void => {
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          ...keyArgs,
          '-nodes',
          '-subj',
          '/CN=localhost',
          '-days',
          '1',
          '-keyout',
          join(tmp, `${name}.key`),
          '-out',
          join(tmp, `${name}.crt`),
        ],
        { stdio: 'ignore' },
      );
    };
    make('ec', ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1']);
    make('rsa', ['-newkey', 'rsa:2048']);
    credentials = {
      key: ['ec', 'rsa'].map((n) => readFileSync(join(tmp, `${n}.key`))),
      cert: ['ec', 'rsa'].map((n) => readFileSync(join(tmp, `${n}.crt`))),
    };
  });

  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Skips the test when `before` found no openssl (outside CI); otherwise the credentials. */
  function needCredentials(t: TestContext): { key: Buffer[]; cert: Buffer[] } | undefined {
    if (!credentials) t.skip('openssl is not installed, so no test certificate can be made');
    return credentials;
  }

  type Outcome =
    | { protocol: string | null; cipher: tls.CipherNameAndProtocol }
    | { clientError: string; serverError: string };

  /** One connection to a server restricted to `suites`; the server and both sockets are closed after. */
  async function connect(
    creds: { key: Buffer[]; cert: Buffer[] },
    suites: readonly string[],
    client: tls.ConnectionOptions,
  ): Promise<Outcome> {
    const server = tls.createServer(
      { ...creds, dhparam: 'auto', ...cipherOptions(suites) },
      (socket) => socket.end(),
    );
    // The server's own account of a refusal; it may arrive after the client's, so it is awaited.
    const serverError = once(server, 'tlsClientError', { signal: AbortSignal.timeout(5000) }).then(
      ([err]: NodeJS.ErrnoException[]) => err?.code ?? String(err),
      () => 'no tlsClientError',
    );
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    try {
      const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ...client });
      try {
        await once(socket, 'secureConnect');
        return { protocol: socket.getProtocol(), cipher: socket.getCipher() };
      } catch (err) {
        return {
          clientError: (err as NodeJS.ErrnoException).code ?? String(err),
          serverError: await serverError,
        };
      } finally {
        socket.destroy();
      }
    } finally {
      server.close();
      await once(server, 'close');
    }
  }

  it('a server restricted to one TLS 1.2 suite negotiates exactly it, and refuses a client without it', async (t) => {
    const creds = needCredentials(t);
    if (!creds) return;
    const suites = ['TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384'];

    assert.deepEqual(await connect(creds, suites, { maxVersion: 'TLSv1.2' }), {
      protocol: 'TLSv1.2',
      cipher: {
        name: 'ECDHE-ECDSA-AES256-GCM-SHA384',
        standardName: 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384',
        version: 'TLSv1.2',
      },
    });
    assert.deepEqual(
      await connect(creds, suites, {
        maxVersion: 'TLSv1.2',
        ciphers: 'ECDHE-ECDSA-AES128-GCM-SHA256',
      }),
      {
        clientError: 'ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE',
        serverError: 'ERR_SSL_NO_SHARED_CIPHER',
      },
    );
    // Naming only a TLS 1.2 suite leaves TLS 1.3 on its defaults.
    const modern = await connect(creds, suites, {});
    assert.ok('cipher' in modern && modern.protocol === 'TLSv1.3', JSON.stringify(modern));
  });

  it('a server restricted to one TLS 1.3 suite refuses a TLS 1.3 client without it but still speaks TLS 1.2', async (t) => {
    const creds = needCredentials(t);
    if (!creds) return;
    const suites = ['TLS_AES_128_GCM_SHA256'];

    const refused = await connect(creds, suites, { ciphers: 'TLS_AES_256_GCM_SHA384' });
    assert.ok(
      'clientError' in refused && refused.serverError === 'ERR_SSL_NO_SHARED_CIPHER',
      JSON.stringify(refused),
    );
    const old = await connect(creds, suites, { maxVersion: 'TLSv1.2' });
    assert.ok('cipher' in old && old.protocol === 'TLSv1.2', JSON.stringify(old));
  });

  it('every suite in the table negotiates, and OpenSSL calls it by the IANA name in the table', async (t) => {
    const creds = needCredentials(t);
    if (!creds) return;
    for (const suite of CIPHER_SUITES) {
      // A client offering only this suite, at the protocol version the suite belongs to.
      const client: tls.ConnectionOptions = suite.tls13
        ? { ciphers: suite.iana }
        : { ciphers: suite.openssl, maxVersion: 'TLSv1.2' };
      const outcome = await connect(creds, [suite.iana], client);
      assert.ok('cipher' in outcome, `${suite.iana}: ${JSON.stringify(outcome)}`);
      assert.equal(outcome.protocol, suite.tls13 ? 'TLSv1.3' : 'TLSv1.2');
      assert.equal(outcome.cipher.standardName, suite.iana);
      assert.equal(outcome.cipher.name, suite.openssl);
    }
  });
});
