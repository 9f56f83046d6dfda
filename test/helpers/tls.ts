// The test certificate authority: the committed one (test/fixtures/tls, made by make.sh) whose
// server certificate names localhost and 127.0.0.1, and throwaway ones made with openssl for tests
// that need certificates of their own (key types, names, extensions).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ConnectionOptions } from 'node:tls';
import { fileURLToPath } from 'node:url';

/** The folder of the committed certificates. */
export const TLS = fileURLToPath(new URL('../fixtures/tls/', import.meta.url));
/** The committed CA (its file, and its PEM), for clients of a server that uses SERVER_CERT. */
export const TEST_CA_FILE = join(TLS, 'ca.crt');
export const TEST_CA = readFileSync(TEST_CA_FILE);
/** For localhost, 127.0.0.1 and ::1; the chain (leaf, then the CA). */
export const SERVER_CERT = join(TLS, 'server.crt');
export const SERVER_KEY = join(TLS, 'server.key');

export type KeyType = 'rsa' | 'ec';

export interface LeafOptions {
  readonly type?: KeyType;
  /** subjectAltName DNS names; the first is the CN too. */
  readonly names: readonly string[];
}

export interface TestCa {
  /** The CA certificate's file and contents. */
  readonly file: string;
  readonly pem: Buffer;
  /** A leaf certificate signed by the CA, written as `<name>.crt` and `<name>.key` in its folder. */
  leaf(name: string, options: LeafOptions): { cert: string; key: string };
}

const keyArgs = (type: KeyType) =>
  type === 'rsa'
    ? ['-newkey', 'rsa:2048']
    : ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'];

/** A new CA (an EC key, valid two days) in `dir`, which the caller removes. */
export function makeTestCa(dir: string, subject = 'Portico test CA'): TestCa {
  const file = join(dir, 'ca.crt');
  const caKey = join(dir, 'ca.key');
  const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
  const common = ['-x509', '-nodes', '-days', '2'];
  openssl([
    'req',
    ...common,
    ...keyArgs('ec'),
    '-keyout',
    caKey,
    '-out',
    file,
    '-subj',
    `/CN=${subject}`,
  ]);
  return {
    file,
    pem: readFileSync(file),
    leaf(name, { type = 'ec', names }) {
      const cert = join(dir, `${name}.crt`);
      const key = join(dir, `${name}.key`);
      openssl([
        'req',
        ...common,
        ...keyArgs(type),
        '-CA',
        file,
        '-CAkey',
        caKey,
        '-keyout',
        key,
        '-out',
        cert,
        '-subj',
        `/CN=${names[0]}`,
        '-addext',
        `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}`,
      ]);
      return { cert, key };
    },
  };
}

/** A TLS connection to a test server that asks for HTTP/2 and trusts the test CA. */
export function h2TlsOptions(port: number, extra: ConnectionOptions = {}): ConnectionOptions {
  return {
    host: '127.0.0.1',
    port,
    ca: TEST_CA,
    servername: 'localhost',
    ALPNProtocols: ['h2'],
    ...extra,
  };
}
