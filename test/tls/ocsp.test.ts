import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import tls from 'node:tls';

import { DerError, Tag, encode } from '../../src/tls/der.js';
import {
  MAX_RESPONSE_BYTES,
  OcspStapler,
  certIdFor,
  encodeOcspRequest,
  parseCertificate,
  parseOcspResponse,
  pemCertificates,
  responderUrl,
  type CertId,
  type OcspStaplerOptions,
} from '../../src/tls/ocsp.js';

// The test PKI: a CA, its OCSP signer, and leaf certificates whose Authority Information Access
// points at `openssl ocsp` (good, revoked, unknown to it), at nothing (noAia), or at `fake`, a TCP
// server standing in for a broken responder. The serial of `good` starts with a 1 bit, so its DER
// INTEGER needs a leading zero octet.
const LEAVES = {
  good: { serial: 'F23456789A', responder: 'openssl' },
  revoked: { serial: '2002', responder: 'openssl' },
  unknown: { serial: '3003', responder: 'openssl' },
  noAia: { serial: '4004', responder: undefined },
  fake: { serial: '5005', responder: 'fake' },
} as const;
type Leaf = keyof typeof LEAVES;

interface Pki {
  dir: string;
  caPem: string;
  pem: Record<Leaf, string>;
  key: Record<Leaf, string>;
  der: Record<Leaf, Buffer>;
  caDer: Buffer;
}

/** How the fake responder treats a connection: close it at once, never answer, or send too much. */
let fakeMode: 'reset' | 'hang' | 'big' = 'reset';
let fakeConnections = 0;
const fakeSockets = new Set<net.Socket>();
const fake = net.createServer((socket) => {
  fakeConnections += 1;
  fakeSockets.add(socket);
  socket.once('close', () => fakeSockets.delete(socket));
  socket.on('error', () => undefined);
  if (fakeMode === 'reset') socket.destroy();
  // Reading (and ignoring) the request is what lets the socket see the client hang up.
  if (fakeMode === 'hang') socket.resume();
  if (fakeMode === 'big') {
    socket.once('data', () => {
      const body = Buffer.alloc(MAX_RESPONSE_BYTES + 1024);
      socket.end(
        Buffer.concat([
          Buffer.from(
            `HTTP/1.1 200 OK\r\ncontent-type: application/ocsp-response\r\ncontent-length: ${body.length}\r\n\r\n`,
          ),
          body,
        ]),
      );
    });
  }
});

let workDir: string | undefined;
let pki: Pki | undefined;
let responder: ChildProcess | undefined;

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Starts `openssl ocsp` as a responder on a port it picks, and returns that port. */
async function startResponder(dir: string): Promise<number> {
  const child = spawn(
    'openssl',
    [
      'ocsp',
      '-index',
      'index.txt',
      '-port',
      '0',
      '-rsigner',
      'ocsp.crt',
      '-rkey',
      'ocsp.key',
      '-CA',
      'ca.crt',
      '-nmin',
      '5',
    ],
    { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  responder = child;
  // It announces the port on stdout: `ACCEPT [::]:PORT PID=…`.
  let output = '';
  child.stdout?.setEncoding('utf8');
  child.stderr?.setEncoding('utf8');
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (text: string) => {
      output += text;
      const port = /ACCEPT .*:(\d+)/.exec(output)?.[1];
      if (port) resolve(Number(port));
    });
    child.stderr?.on('data', (text: string) => {
      output += text;
    });
    child.once('exit', (code) => reject(new Error(`openssl ocsp exited (${code}): ${output}`)));
  });
}

async function makePki(dir: string): Promise<Pki> {
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
      '',
    ].join('\n'),
  );
  // The leaves name the responder's port, so it is started first.
  const ports = { openssl: await startResponder(dir), fake: (fake.address() as AddressInfo).port };
  for (const [name, { serial, responder: which }] of Object.entries(LEAVES)) {
    const aia = which ? `authorityInfoAccess = OCSP;URI:http://127.0.0.1:${ports[which]}` : '';
    issue(name, serial, `subjectAltName = IP:127.0.0.1\n${aia}`);
  }
  const read = (file: string): string => readFileSync(join(dir, file), 'utf8');
  const names = Object.keys(LEAVES) as Leaf[];
  const record = <T>(f: (name: Leaf) => T): Record<Leaf, T> =>
    Object.fromEntries(names.map((n) => [n, f(n)])) as Record<Leaf, T>;
  const caPem = read('ca.crt');
  return {
    dir,
    caPem,
    pem: record((n) => read(`${n}.crt`)),
    key: record((n) => read(`${n}.key`)),
    der: record((n) => pemCertificates(read(`${n}.crt`))[0]!),
    caDer: pemCertificates(caPem)[0]!,
  };
}

function opensslMissing(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return false;
  } catch {
    return true;
  }
}

// Under CI a missing openssl is not skipped over: making the PKI fails instead.
const SKIP =
  !process.env.CI && opensslMissing()
    ? 'openssl is not installed: no certificates and no responder to test against'
    : false;

before(async () => {
  if (SKIP) return;
  fake.listen(0, '127.0.0.1');
  await once(fake, 'listening');
  workDir = mkdtempSync(join(tmpdir(), 'portico-ocsp-'));
  pki = await makePki(workDir);
});

after(() => {
  responder?.kill();
  for (const socket of fakeSockets) socket.destroy();
  if (fake.listening) fake.close();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

function thePki(): Pki {
  assert.ok(pki, 'the PKI was not made');
  return pki;
}

const certIdOf = (p: Pki, leaf: Leaf): CertId =>
  certIdFor(parseCertificate(p.der[leaf]), parseCertificate(p.caDer));

/** `openssl ocsp` answering the request for `leaf` from a file, without a server. */
function offlineResponse(p: Pki, leaf: Leaf, validity: string[]): Buffer {
  writeFileSync(join(p.dir, `${leaf}.req`), encodeOcspRequest(certIdOf(p, leaf)));
  openssl(p.dir, [
    'ocsp',
    '-index',
    'index.txt',
    '-rsigner',
    'ocsp.crt',
    '-rkey',
    'ocsp.key',
    '-CA',
    'ca.crt',
    '-reqin',
    `${leaf}.req`,
    '-respout',
    `${leaf}.resp`,
    ...validity,
  ]);
  return readFileSync(join(p.dir, `${leaf}.resp`));
}

describe('OCSP responder URLs', () => {
  it('takes the first http(s) responder and ignores other schemes', () => {
    const fields = {
      serialNumber: Buffer.alloc(1),
      issuer: Buffer.alloc(0),
      subject: Buffer.alloc(0),
      publicKey: Buffer.alloc(0),
    };
    assert.equal(
      responderUrl({ ...fields, ocspUris: ['ldap://x/', 'not a url', 'https://ocsp.example/'] })
        ?.href,
      'https://ocsp.example/',
    );
    assert.equal(
      responderUrl({ ...fields, ocspUris: ['ldap://x/', 'file:///etc/passwd'] }),
      undefined,
    );
  });
});

describe('OCSP requests and responses', { skip: SKIP }, () => {
  it('reads serial number, names, key and responder from a certificate', () => {
    const p = thePki();
    const good = parseCertificate(p.der.good);
    assert.equal(good.serialNumber.toString('hex'), '00f23456789a');
    assert.equal(good.ocspUris.length, 1);
    assert.match(responderUrl(good)?.href ?? '', /^http:\/\/127\.0\.0\.1:\d+\/$/);
    const ca = parseCertificate(p.caDer);
    assert.ok(good.issuer.equals(ca.subject));
    assert.deepEqual(parseCertificate(p.der.noAia).ocspUris, []);
  });

  it('builds the same request as `openssl ocsp -reqout -no_nonce`', () => {
    const p = thePki();
    for (const leaf of ['good', 'revoked'] as const) {
      openssl(p.dir, [
        'ocsp',
        '-issuer',
        'ca.crt',
        '-cert',
        `${leaf}.crt`,
        '-reqout',
        `${leaf}.openssl.req`,
        '-no_nonce',
      ]);
      const expected = readFileSync(join(p.dir, `${leaf}.openssl.req`));
      assert.equal(
        encodeOcspRequest(certIdOf(p, leaf)).toString('hex'),
        expected.toString('hex'),
        leaf,
      );
    }
  });

  it("parses the responder's answers: good, revoked, unknown, with and without nextUpdate", () => {
    const p = thePki();
    const started = Date.now() - 2000;
    const good = parseOcspResponse(offlineResponse(p, 'good', ['-nmin', '5']), certIdOf(p, 'good'));
    assert.equal(good.certStatus, 'good');
    assert.ok(
      good.thisUpdate.getTime() >= started && good.thisUpdate.getTime() <= Date.now(),
      good.thisUpdate.toISOString(),
    );
    assert.equal(good.nextUpdate?.getTime(), good.thisUpdate.getTime() + 5 * 60_000);
    assert.equal(
      parseOcspResponse(offlineResponse(p, 'good', []), certIdOf(p, 'good')).nextUpdate,
      undefined,
    );
    assert.equal(
      parseOcspResponse(offlineResponse(p, 'revoked', ['-ndays', '1']), certIdOf(p, 'revoked'))
        .certStatus,
      'revoked',
    );
    assert.equal(
      parseOcspResponse(offlineResponse(p, 'unknown', ['-ndays', '1']), certIdOf(p, 'unknown'))
        .certStatus,
      'unknown',
    );
  });

  it('refuses a response about another certificate, an unsuccessful one, and damaged ones', () => {
    const p = thePki();
    const response = offlineResponse(p, 'good', ['-nmin', '5']);
    assert.throws(
      () => parseOcspResponse(response, certIdOf(p, 'revoked')),
      /no status for this certificate/,
    );
    assert.throws(
      () =>
        parseOcspResponse(
          encode(Tag.SEQUENCE, encode(Tag.ENUMERATED, Buffer.from([3]))),
          certIdOf(p, 'good'),
        ),
      /answered tryLater/,
    );
    for (let length = 0; length < response.length; length++) {
      assert.throws(
        () => parseOcspResponse(response.subarray(0, length), certIdOf(p, 'good')),
        DerError,
      );
    }
    for (let i = 0; i < 2000; i++) {
      const mutated = Buffer.from(response);
      const at = Math.floor(Math.random() * mutated.length);
      mutated[at] = (mutated[at] ?? 0) ^ (1 << Math.floor(Math.random() * 8));
      try {
        parseOcspResponse(mutated, certIdOf(p, 'good'));
      } catch (err) {
        assert.ok(
          err instanceof Error && !(err instanceof RangeError) && !(err instanceof TypeError),
          String(err),
        );
      }
    }
  });
});

// ---- Stapling on a real TLS server --------------------------------------------------------------

interface Staging {
  stapler: OcspStapler;
  logs: string[];
  port: number;
  close(): Promise<void>;
}

async function stage(
  p: Pki,
  leaf: Leaf,
  options: Partial<OcspStaplerOptions> = {},
): Promise<Staging> {
  const logs: string[] = [];
  const stapler = new OcspStapler({ log: (line) => logs.push(line), ...options });
  const server = tls.createServer({ cert: p.pem[leaf] + p.caPem, key: p.key[leaf] }, (socket) =>
    socket.end(),
  );
  server.on('OCSPRequest', stapler.onOcspRequest);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    stapler,
    logs,
    port: (server.address() as AddressInfo).port,
    async close() {
      stapler.close();
      server.close();
      await once(server, 'close');
    },
  };
}

/** One handshake from Node asking for status: the stapled response, if any, and how long it took. */
async function handshake(
  p: Pki,
  port: number,
): Promise<{ response: Buffer | undefined; ms: number }> {
  const started = performance.now();
  let response: Buffer | undefined;
  // tls.connect passes requestOCSP on to the TLSSocket; @types/node only declares it there.
  const options: tls.ConnectionOptions & tls.TLSSocketOptions = {
    host: '127.0.0.1',
    port,
    ca: p.caPem,
    requestOCSP: true,
  };
  const socket = tls.connect(options);
  // Emitted with null when the server staples nothing.
  socket.on('OCSPResponse', (der: Buffer | null) => {
    response = der ?? undefined;
  });
  try {
    await once(socket, 'secureConnect');
    return { response, ms: performance.now() - started };
  } finally {
    socket.destroy();
  }
}

/** `openssl s_client -status`'s account of the handshake. */
function sClient(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'openssl',
      ['s_client', '-connect', `127.0.0.1:${port}`, '-status'],
      { timeout: 10_000 },
      (err, stdout) => {
        if (err) reject(err);
        else resolve(stdout);
      },
    );
    child.stdin?.end();
  });
}

async function eventually<T>(
  what: string,
  attempt: () => Promise<T | undefined>,
  ms = 5000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const result = await attempt();
    if (result !== undefined) return result;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('OCSP stapling on 127.0.0.1', { skip: SKIP }, () => {
  it('the first handshake gets no staple and starts the fetch; later ones get "good" (s_client and Node)', async () => {
    const p = thePki();
    const s = await stage(p, 'good');
    try {
      const first = await sClient(s.port);
      assert.match(first, /OCSP response: no response sent/);
      const response = await eventually(
        'a stapled response',
        async () => (await handshake(p, s.port)).response,
      );
      assert.equal(parseOcspResponse(response, certIdOf(p, 'good')).certStatus, 'good');
      const later = await sClient(s.port);
      assert.match(later, /OCSP Response Status: successful \(0x0\)/);
      assert.match(later, /Cert Status: good/);
      assert.match(later, /Serial Number: F23456789A/);
      assert.deepEqual(s.logs, []);
    } finally {
      await s.close();
    }
  });

  it('prefetch staples from the first handshake, and the cached response is reused', async () => {
    const p = thePki();
    const s = await stage(p, 'good');
    try {
      s.stapler.prefetch(p.pem.good + p.caPem);
      // Give the background fetch time to finish without any handshake prompting it.
      await sleep(1000);
      const output = await sClient(s.port);
      assert.match(output, /OCSP Response Status: successful/);
      assert.match(output, /Cert Status: good/);
      const responses = await Promise.all([1, 2, 3].map(() => handshake(p, s.port)));
      const first = responses[0]?.response;
      assert.ok(first);
      for (const { response } of responses)
        assert.deepEqual(response, first, 'the same cached DER');
      assert.deepEqual(s.logs, []);
    } finally {
      await s.close();
    }
  });

  it('refreshes in the background once within the refresh margin', async () => {
    const p = thePki();
    // The responder's answers are valid for 5 minutes from thisUpdate (whole seconds): refresh
    // 2 to 3 s after fetching, far enough from the 1 s below which the stapler waits a minute.
    const s = await stage(p, 'good', { refreshMarginMs: 5 * 60_000 - 3000 });
    try {
      s.stapler.prefetch(p.pem.good + p.caPem);
      const first = await eventually(
        'a stapled response',
        async () => (await handshake(p, s.port)).response,
      );
      const firstUpdate = parseOcspResponse(first, certIdOf(p, 'good')).thisUpdate.getTime();
      const refreshed = await eventually(
        'a newer response',
        async () => {
          const { response } = await handshake(p, s.port);
          return response &&
            parseOcspResponse(response, certIdOf(p, 'good')).thisUpdate.getTime() > firstUpdate
            ? response
            : undefined;
        },
        8000,
      );
      assert.equal(parseOcspResponse(refreshed, certIdOf(p, 'good')).certStatus, 'good');
      assert.deepEqual(s.logs, []);
    } finally {
      await s.close();
    }
  });

  for (const leaf of ['revoked', 'unknown'] as const) {
    it(`a certificate the responder calls ${leaf} is not stapled, and logged once`, async () => {
      const p = thePki();
      const s = await stage(p, leaf);
      try {
        s.stapler.prefetch(p.pem[leaf] + p.caPem);
        await eventually('the log line', async () => (s.logs.length > 0 ? true : undefined));
        for (let i = 0; i < 3; i++) assert.equal((await handshake(p, s.port)).response, undefined);
        assert.match(await sClient(s.port), /OCSP response: no response sent/);
        assert.equal(s.logs.length, 1, s.logs.join('\n'));
        assert.match(
          s.logs[0] ?? '',
          new RegExp(
            `^OCSP stapling: certificate "CN=${leaf}" .* is ${leaf.toUpperCase()} according to http://127\\.0\\.0\\.1:\\d+/; it is served without stapling; asking again in 1 min`,
          ),
        );
      } finally {
        await s.close();
      }
    });
  }

  it("a certificate without a responder (every Let's Encrypt certificate since 2025): no staple, no warning", async () => {
    const p = thePki();
    const s = await stage(p, 'noAia');
    try {
      s.stapler.prefetch(p.pem.noAia + p.caPem);
      for (let i = 0; i < 4; i++) assert.equal((await handshake(p, s.port)).response, undefined);
      assert.match(await sClient(s.port), /OCSP response: no response sent/);
      s.stapler.prefetch(p.pem.noAia);
      assert.deepEqual(s.logs, []);
    } finally {
      await s.close();
    }
  });

  it('a chain without the issuer: no staple, exactly one warning', async () => {
    const p = thePki();
    const logs: string[] = [];
    const stapler = new OcspStapler({ log: (line) => logs.push(line) });
    try {
      // What Node passes when neither the chain nor `ca` holds the issuer.
      for (let i = 0; i < 3; i++) {
        const answer = await new Promise<Buffer | undefined>((resolve) =>
          stapler.onOcspRequest(p.der.good, null, (err, der) => resolve(err ? undefined : der)),
        );
        assert.equal(answer, undefined);
      }
      assert.equal(logs.length, 1, logs.join('\n'));
      assert.match(
        logs[0] ?? '',
        /"CN=good" .* is served without stapling: its issuer is not in the certificate chain$/,
      );
      // Prefetching a PEM without the issuer leaves the decision to the handshake: nothing new.
      stapler.prefetch(p.pem.good);
      assert.equal(logs.length, 1);
    } finally {
      stapler.close();
    }
  });

  it('a responder that is down: handshakes at once, one failure logged, back-off instead of a fetch per handshake', async () => {
    const p = thePki();
    fakeMode = 'reset';
    fakeConnections = 0;
    const s = await stage(p, 'fake');
    try {
      for (let i = 0; i < 5; i++) {
        const { response, ms } = await handshake(p, s.port);
        assert.equal(response, undefined);
        assert.ok(ms < 1000, `handshake took ${ms} ms`);
        await sleep(50);
      }
      assert.equal(fakeConnections, 1, 'one fetch; the retry waits for its back-off');
      assert.equal(s.logs.length, 1, s.logs.join('\n'));
      assert.match(
        s.logs[0] ?? '',
        /^OCSP stapling: could not get the status of certificate "CN=fake" .* from http:\/\/127\.0\.0\.1:\d+\/: socket hang up; asking again in 1 min, then less often$/,
      );
    } finally {
      await s.close();
    }
  });

  it('a responder that never answers does not hold up handshakes, and the fetch times out', async () => {
    const p = thePki();
    fakeMode = 'hang';
    fakeConnections = 0;
    // Handshakes are allowed half the fetch's time limit: enough on a loaded CI machine, and still
    // proof that none of them waited for the fetch.
    const s = await stage(p, 'fake', { fetchTimeoutMs: 3000 });
    try {
      const { response, ms } = await handshake(p, s.port);
      assert.equal(response, undefined);
      assert.ok(ms < 1500, `handshake took ${ms} ms`);
      await eventually('the fetch to start', async () =>
        fakeConnections === 1 ? true : undefined,
      );
      assert.ok((await handshake(p, s.port)).ms < 1500, 'while the fetch is pending');
      await eventually('the timeout', async () => (s.logs.length > 0 ? true : undefined));
      assert.equal(s.logs.length, 1, s.logs.join('\n'));
      assert.match(s.logs[0] ?? '', /: no complete answer within 3000 ms; asking again in 1 min/);
      await eventually('the connection to be closed', async () =>
        fakeSockets.size === 0 ? true : undefined,
      );
    } finally {
      await s.close();
    }
  });

  it('close() aborts a fetch in flight, quietly, and stops stapling', async () => {
    const p = thePki();
    fakeMode = 'hang';
    fakeConnections = 0;
    const s = await stage(p, 'fake');
    try {
      s.stapler.prefetch(p.pem.fake + p.caPem);
      await eventually('the fetch to start', async () =>
        fakeConnections === 1 ? true : undefined,
      );
      s.stapler.close();
      await eventually('the connection to be closed', async () =>
        fakeSockets.size === 0 ? true : undefined,
      );
      assert.equal((await handshake(p, s.port)).response, undefined);
      assert.equal(fakeConnections, 1);
      assert.deepEqual(s.logs, []);
    } finally {
      await s.close();
    }
  });

  it(`refuses responses larger than ${MAX_RESPONSE_BYTES / 1024} KiB`, async () => {
    const p = thePki();
    fakeMode = 'big';
    const s = await stage(p, 'fake');
    try {
      s.stapler.prefetch(p.pem.fake + p.caPem);
      await eventually('the failure', async () => (s.logs.length > 0 ? true : undefined));
      assert.match(s.logs[0] ?? '', /: the response is larger than 64 KiB; asking again/);
      assert.equal((await handshake(p, s.port)).response, undefined);
    } finally {
      await s.close();
    }
  });
});
