// The OCSP test PKI, made with openssl in a temporary folder: a CA, its OCSP signer, `openssl ocsp`
// answering for it on loopback, and leaf certificates whose Authority Information Access points at
// that responder (good, revoked, unknown to it), at nothing (noAia), or at `fake`, a responder a
// test may run (broken, or relaying to `openssl ocsp`, which knows it as good). The serial of
// `good` starts with a 1 bit, so its DER INTEGER needs a leading zero octet. Also: watching the
// OCSP requests this process sends.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import diagnostics from 'node:diagnostics_channel';
import type { ClientRequest } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import {
  certIdFor,
  encodeOcspRequest,
  parseCertificate,
  pemCertificates,
  type CertId,
} from '../../src/tls/ocsp-codec.js';

export const LEAVES = {
  good: { serial: 'F23456789A', responder: 'openssl' },
  revoked: { serial: '2002', responder: 'openssl' },
  unknown: { serial: '3003', responder: 'openssl' },
  noAia: { serial: '4004', responder: undefined },
  fake: { serial: '5005', responder: 'fake' },
} as const;
export type Leaf = keyof typeof LEAVES;

export interface Pki {
  readonly dir: string;
  /** Where `openssl ocsp` listens on 127.0.0.1. */
  readonly responderPort: number;
  readonly caPem: string;
  readonly caDer: Buffer;
  readonly pem: Record<Leaf, string>;
  readonly key: Record<Leaf, string>;
  readonly der: Record<Leaf, Buffer>;
  /** Stops the responder and removes the folder. */
  close(): void;
}

// Under CI a missing openssl is not skipped over: making the PKI fails instead.
export const SKIP =
  !process.env.CI && spawnSync('openssl', ['version'], { stdio: 'ignore' }).status !== 0
    ? 'openssl is not installed: no certificates and no responder to test against'
    : false;

export function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** `openssl ocsp` answering for the test CA: its index, its responder certificate and key. */
const RESPONDER = [
  'ocsp',
  '-index',
  'index.txt',
  '-rsigner',
  'ocsp.crt',
  '-rkey',
  'ocsp.key',
  '-CA',
  'ca.crt',
];

/** Starts `openssl ocsp` as a responder on a port it picks; resolves once it announces it. */
function startResponder(dir: string): { child: ReturnType<typeof spawn>; port: Promise<number> } {
  const child = spawn('openssl', [...RESPONDER, '-port', '0', '-nmin', '5'], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // It announces the port on stdout: `ACCEPT [::]:PORT PID=…`.
  let output = '';
  child.stdout?.setEncoding('utf8');
  child.stderr?.setEncoding('utf8');
  const port = new Promise<number>((resolve, reject) => {
    child.stdout?.on('data', (text: string) => {
      output += text;
      const found = /ACCEPT .*:(\d+)/.exec(output)?.[1];
      if (found) resolve(Number(found));
    });
    child.stderr?.on('data', (text: string) => {
      output += text;
    });
    child.once('exit', (code) => reject(new Error(`openssl ocsp exited (${code}): ${output}`)));
  });
  return { child, port };
}

/** A new PKI; `fakePort` is where the `fake` leaf's responder listens (none: no AIA). */
export async function makePki(fakePort?: number): Promise<Pki> {
  const dir = mkdtempSync(join(tmpdir(), 'portico-ocsp-'));
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(dir, [
    'req',
    '-x509',
    ...ec,
    '-subj',
    '/CN=Portico Test CA',
    '-days',
    '2',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-addext',
    'basicConstraints=critical,CA:true',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  const issue = (name: string, serial: string, extensions: string): void => {
    writeFileSync(join(dir, `${name}.ext`), `basicConstraints = CA:false\n${extensions}\n`);
    openssl(dir, [
      'req',
      ...ec,
      '-subj',
      `/CN=${name}`,
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
    ]);
    openssl(dir, [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-set_serial',
      `0x${serial}`,
      '-days',
      '2',
      '-extfile',
      `${name}.ext`,
      '-out',
      `${name}.crt`,
    ]);
  };
  issue('ocsp', '1001', 'extendedKeyUsage = OCSPSigning');
  // The responder's database: serials are all it looks at. `unknown` is deliberately absent.
  const expiry = '301231235959Z';
  writeFileSync(
    join(dir, 'index.txt'),
    [
      `V\t${expiry}\t\t${LEAVES.good.serial}\tunknown\t/CN=good`,
      `R\t${expiry}\t260101000000Z\t${LEAVES.revoked.serial}\tunknown\t/CN=revoked`,
      `V\t${expiry}\t\t${LEAVES.fake.serial}\tunknown\t/CN=fake`,
      '',
    ].join('\n'),
  );
  // The leaves name the responder's port, so it is started first.
  const responder = startResponder(dir);
  const close = (): void => {
    responder.child.kill();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const responderPort = await responder.port;
    const ports = { openssl: responderPort, fake: fakePort };
    for (const [name, { serial, responder: which }] of Object.entries(LEAVES)) {
      const port = which && ports[which];
      const aia = port ? `authorityInfoAccess = OCSP;URI:http://127.0.0.1:${port}` : '';
      issue(name, serial, `subjectAltName = IP:127.0.0.1\n${aia}`);
    }
    const read = (file: string): string => readFileSync(join(dir, file), 'utf8');
    const names = Object.keys(LEAVES) as Leaf[];
    const record = <T>(f: (name: Leaf) => T): Record<Leaf, T> =>
      Object.fromEntries(names.map((n) => [n, f(n)])) as Record<Leaf, T>;
    const caPem = read('ca.crt');
    return {
      dir,
      responderPort,
      caPem,
      caDer: pemCertificates(caPem)[0]!,
      pem: record((n) => read(`${n}.crt`)),
      key: record((n) => read(`${n}.key`)),
      der: record((n) => pemCertificates(read(`${n}.crt`))[0]!),
      close,
    };
  } catch (err) {
    close();
    throw err;
  }
}

export const certIdOf = (p: Pki, leaf: Leaf): CertId =>
  certIdFor(parseCertificate(p.der[leaf]), parseCertificate(p.caDer));

/** `openssl ocsp` answering the request for `leaf` from a file, without a server. */
export function offlineResponse(p: Pki, leaf: Leaf, validity: string[]): Buffer {
  writeFileSync(join(p.dir, `${leaf}.req`), encodeOcspRequest(certIdOf(p, leaf)));
  openssl(p.dir, [...RESPONDER, '-reqin', `${leaf}.req`, '-respout', `${leaf}.resp`, ...validity]);
  return readFileSync(join(p.dir, `${leaf}.resp`));
}

export interface OcspRequests {
  /** The OCSP requests sent to `127.0.0.1:port` since watching began. */
  count(port: number): number;
  stop(): void;
}

/**
 * Watches this process's HTTP client for OCSP requests. Node announces a request within a tick
 * of its sending, so a fetch that a handshake starts is counted before that handshake completes.
 */
export function watchOcspRequests(): OcspRequests {
  const hosts: string[] = [];
  const onStart = (message: unknown): void => {
    const request = (message as { request: ClientRequest }).request;
    if (request.getHeader('content-type') === 'application/ocsp-request')
      hosts.push(String(request.getHeader('host')));
  };
  diagnostics.subscribe('http.client.request.start', onStart);
  return {
    count: (port) => hosts.filter((host) => host === `127.0.0.1:${port}`).length,
    stop: () => diagnostics.unsubscribe('http.client.request.start', onStart),
  };
}
