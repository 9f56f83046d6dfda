// A server name written as a fully qualified DNS name (`example.com.`, with the root's dot) is the
// same name: the client gets that name's certificate, not the default one. Checked with Node's TLS
// client and with openssl s_client, by the fingerprint of the certificate presented.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { freePort } from '../helpers/server.js';
import { spawnPortico, type PorticoProcess } from './portico-process.js';
import { SERVER_CERT, SERVER_KEY, TEST_CA, TEST_CA_FILE, TLS } from '../helpers/tls.js';

const fingerprint = (file: string) =>
  new X509Certificate(readFileSync(join(TLS, file))).fingerprint256;
// Each certificate by what it is for, so a failure names the certificate that came instead.
const CERTIFICATES = new Map([
  [fingerprint('server.crt'), 'the default (localhost)'],
  [fingerprint('example.com.crt'), 'example.com'],
  [fingerprint('example.org.crt'), '*.example.org'],
]);
const certificateFor = (print: string) => CERTIFICATES.get(print) ?? `an unknown one (${print})`;

// Name asked for → the certificate it must get: an sni entry, a subjectAltName without an sni
// entry, an sni wildcard, each with its trailing dot and in another case; one dot only is dropped.
const CASES: [string, string][] = [
  ['example.com.', 'example.com'],
  ['EXAMPLE.Com.', 'example.com'],
  ['www.example.com.', 'example.com'],
  ['a.example.org.', '*.example.org'],
  ['example.com', 'example.com'],
  ['example.com..', 'the default (localhost)'],
  ['other.test.', 'the default (localhost)'],
];

let portico: PorticoProcess;
let sport: number;

before(async () => {
  sport = await freePort();
  portico = await spawnPortico(`global:
  secure: true
  sport: "127.0.0.1:${sport}"
  cert: ${SERVER_CERT}
  key: ${SERVER_KEY}
  sni:
    example.com:
      cert: ${join(TLS, 'example.com.crt')}
      key: ${join(TLS, 'example.com.key')}
    "*.example.org":
      cert: ${join(TLS, 'example.org.crt')}
      key: ${join(TLS, 'example.org.key')}
`);
});
after(() => portico?.stop());

/** The fingerprint of the certificate Node's TLS client is presented for `servername`. */
function nodeClient(servername: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect(
      {
        host: '127.0.0.1',
        port: sport,
        servername,
        ca: TEST_CA,
        // The chain is verified; the name is what is under test, compared by fingerprint.
        checkServerIdentity: () => undefined,
      },
      () => {
        const cert = socket.getPeerX509Certificate();
        socket.end();
        resolve(cert?.fingerprint256 ?? '');
      },
    );
    socket.on('error', reject);
  });
}

/** The fingerprint of the certificate openssl s_client is presented for `servername`. */
function opensslClient(servername: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'openssl',
      [
        's_client',
        '-connect',
        `127.0.0.1:${sport}`,
        '-servername',
        servername,
        '-CAfile',
        TEST_CA_FILE,
      ],
      { timeout: 10_000 },
      (error, stdout) => {
        if (error) return reject(new Error(`openssl s_client: ${error.message}\n${stdout}`));
        assert.match(stdout, /Verify return code: 0 \(ok\)/, stdout);
        const pem = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/.exec(stdout);
        assert.ok(pem, stdout);
        resolve(new X509Certificate(pem[0]).fingerprint256);
      },
    );
    // End of input: s_client closes once the handshake is done.
    child.stdin?.end();
  });
}

/** Why the openssl part cannot run here, or undefined when it can (under CI it always must). */
function opensslMissing(): Promise<string | undefined> {
  return new Promise((resolve) =>
    execFile('openssl', ['version'], (error) =>
      resolve(
        error && process.env.CI !== 'true'
          ? `openssl is not installed (${error.message})`
          : undefined,
      ),
    ),
  );
}

describe('a server name with a trailing dot gets its own certificate', () => {
  it("Node's TLS client", async () => {
    for (const [servername, expected] of CASES)
      assert.equal(certificateFor(await nodeClient(servername)), expected, servername);
  });

  it('openssl s_client', async (t) => {
    const missing = await opensslMissing();
    if (missing) return t.skip(missing);
    for (const [servername, expected] of CASES)
      assert.equal(certificateFor(await opensslClient(servername)), expected, servername);
  });
});
