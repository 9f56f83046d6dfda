// Automatic TLS against a real ACME CA: Debian's pebble with real validation (its VA connects back
// to Portico's listeners), pebble-challtestsrv as the DNS server answering 127.0.0.1 for the test
// names (and 127.0.0.2, where nothing listens, for a name that must fail), and `portico run` as a
// user starts it, with NODE_EXTRA_CA_CERTS trusting pebble's own listener.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { BIN } from '../helpers/cli.js';
import { freePort, freePorts } from '../helpers/server.js';
import { until } from '../helpers/wait.js';

const missing = ['pebble', 'pebble-challtestsrv', 'openssl', 'python3'].filter(
  (p) => spawnSync('sh', ['-c', `command -v ${p}`]).status !== 0,
);
const cryptographyMissing =
  spawnSync('python3', ['-c', 'import cryptography']).status !== 0 ? ['python3-cryptography'] : [];
const skip = [...missing, ...cryptographyMissing];
if (skip.length > 0 && process.env.CI) throw new Error(`CI needs ${skip.join(', ')}`);

const dir = mkdtempSync(join(tmpdir(), 'portico-acme-'));
after(() => rmSync(dir, { recursive: true, force: true }));

interface Ca {
  readonly directoryUrl: string;
  readonly caFile: string;
  /** Pebble's issuing root, to verify what Portico serves. */
  root(): Promise<string>;
  /** Makes a test name resolve to `address`. */
  resolve(name: string, address: string): Promise<void>;
}

interface Ports {
  readonly http: number;
  readonly https: number;
}

const children: ChildProcess[] = [];
after(() => {
  for (const child of children) child.kill('SIGKILL');
});

/** Starts pebble and its DNS server; pebble validates on the given Portico ports. */
async function startCa(ports: Ports, own: readonly number[]): Promise<Ca> {
  const [listen, management, dns, dnsManagement] = own as [number, number, number, number];
  const caFile = join(dir, `pebble-${listen}.crt`);
  const keyFile = join(dir, `pebble-${listen}.key`);
  spawnSync('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-days',
    '2',
    '-keyout',
    keyFile,
    '-out',
    caFile,
    '-subj',
    '/CN=pebble',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
  ]);
  const config = join(dir, `pebble-${listen}.json`);
  writeFileSync(
    config,
    JSON.stringify({
      pebble: {
        listenAddress: `127.0.0.1:${listen}`,
        managementListenAddress: `127.0.0.1:${management}`,
        certificate: caFile,
        privateKey: keyFile,
        httpPort: ports.http,
        tlsPort: ports.https,
        ocspResponderURL: '',
        externalAccountBindingRequired: false,
      },
    }),
  );
  const dnsServer = spawn(
    'pebble-challtestsrv',
    [
      '-dns01',
      `127.0.0.1:${dns}`,
      '-management',
      `127.0.0.1:${dnsManagement}`,
      '-http01',
      '',
      '-https01',
      '',
      '-tlsalpn01',
      '',
      '-defaultIPv4',
      '127.0.0.1',
      '-defaultIPv6',
      '',
    ],
    { stdio: 'ignore' },
  );
  // No random sleeps before validation, no nonces refused on purpose: the tests wait for results.
  const pebble = spawn('pebble', ['-config', config, '-dnsserver', `127.0.0.1:${dns}`], {
    env: { ...process.env, PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0' },
    stdio: 'ignore',
  });
  children.push(dnsServer, pebble);
  // The servers take a moment to listen: the first requests are retried until one is answered.
  const get = (url: string, init?: RequestInit): Promise<Response | undefined> =>
    until(() => fetch(url, init).catch(() => undefined), {
      ok: (response) => response !== undefined,
      what: `an answer from ${url}`,
    });
  // Pebble's management API is https with its own certificate: read with curl -k.
  const root = () =>
    until(
      () =>
        spawnSync('curl', ['-sk', `https://127.0.0.1:${management}/roots/0`], {
          encoding: 'utf8',
        }).stdout,
      { ok: (pem) => pem.includes('BEGIN CERTIFICATE'), what: "pebble's root certificate" },
    );
  await root();
  return {
    directoryUrl: `https://127.0.0.1:${listen}/dir`,
    caFile,
    root,
    resolve: async (name, address) => {
      const r = await get(`http://127.0.0.1:${dnsManagement}/add-a`, {
        method: 'POST',
        body: JSON.stringify({ host: `${name}.`, addresses: [address] }),
      });
      assert.equal(r?.status, 200);
    },
  };
}

interface Portico {
  readonly output: () => string;
  readonly child: ChildProcess;
  /** Resolves when the output matches, or fails after `ms`. */
  waitFor(pattern: RegExp, ms?: number): Promise<void>;
  stop(): Promise<void>;
}

async function startPortico(file: string, ca: Ca): Promise<Portico> {
  const child = spawn(process.execPath, [BIN, 'run', '-c', file], {
    env: { ...process.env, NODE_EXTRA_CA_CERTS: ca.caFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const waitFor = async (pattern: RegExp, ms = 20_000) => {
    await until(() => out, {
      ok: (text) => pattern.test(text) || child.exitCode !== null,
      what: `${pattern} in the output`,
      ms,
    });
    if (!pattern.test(out)) throw new Error(`exited before ${pattern}; the output is:\n${out}`);
  };
  await waitFor(/Portico is serving/);
  return {
    output: () => out,
    child,
    waitFor,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

function configFor(
  ports: Ports,
  ca: Ca,
  store: string,
  names: readonly string[],
  extra = '',
): string {
  return [
    'global:',
    `  port: 127.0.0.1:${ports.http}`,
    `  sport: 127.0.0.1:${ports.https}`,
    '  secure: true',
    '  enableAutomaticTLS: true',
    `  automaticTLSDirectoryUrl: ${ca.directoryUrl}`,
    `  automaticTLSContactCacheDirectory: ${store}`,
    '  automaticTLSContactEmail: admin@example.test',
    `  wwwroot: ${dir}`,
    // The primary orders, both workers answer the CA and serve what it issued.
    '  workers: 2',
    extra,
    'hosts:',
    ...names.map((n) => `  - domain: ${n}`),
    '',
  ].join('\n');
}

/** The subject and issuer a client asking for `name` is served, verified against `root`. */
function served(port: number, name: string, root: string): Promise<{ cn: string; issuer: string }> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, servername: name, ca: root }, () => {
      const cert = socket.getPeerCertificate();
      socket.end();
      resolve({ cn: String(cert.subject?.CN), issuer: String(cert.issuer?.CN) });
    });
    socket.on('error', reject);
  });
}

async function setUp(names: readonly string[], extra = '') {
  // All at once, so no two repeat (HTTP and HTTPS on one port made this test fail once).
  const [http, https, ...caPorts] = await freePorts(6);
  const ports = { http: http!, https: https! };
  const ca = await startCa(ports, caPorts);
  const store = mkdtempSync(join(dir, 'store-'));
  const file = join(dir, `portico-${ports.https}.yaml`);
  writeFileSync(file, configFor(ports, ca, store, names, extra));
  return { ports, ca, store, file };
}

describe(
  'automatic TLS against pebble',
  { skip: skip.length > 0 && `needs ${skip.join(', ')}` },
  () => {
    it('TLS-ALPN-01: one certificate per name; a name that fails validation holds nobody back; a restart reuses what is stored', async (t) => {
      const { ports, ca, store, file } = await setUp(['a.test', 'b.test', 'bad.test']);
      await ca.resolve('bad.test', '127.0.0.2');
      let portico = await startPortico(file, ca);
      t.after(() => portico.stop());
      await portico.waitFor(/a\.test: certificate obtained/);
      await portico.waitFor(/b\.test: certificate obtained/);
      await portico.waitFor(/bad\.test: the order failed \(.*\); next attempt in 60 s/);
      const root = await ca.root();
      // Handshakes on connections of their own reach both workers.
      for (const name of ['a.test', 'b.test', 'a.test', 'b.test', 'a.test', 'b.test']) {
        const cert = await served(ports.https, name, root);
        assert.equal(cert.cn, name);
        assert.match(cert.issuer, /Pebble/);
      }
      for (const name of ['a', 'b'])
        assert.equal(
          portico.output().match(new RegExp(`${name}\\.test: ordering a certificate`, 'g'))?.length,
          1,
          `${name}.test ordered once for the two workers`,
        );
      // A name without a certificate fails its handshake (as in Ferron): no other name's is shown.
      await assert.rejects(served(ports.https, 'bad.test', root));
      // Stored 0600, in a folder for this CA.
      const [caFolder] = readdirSync(store);
      const files = readdirSync(join(store, caFolder!, 'certificates')).sort();
      assert.deepEqual(files, ['a.test.crt', 'a.test.key', 'b.test.crt', 'b.test.key']);
      for (const f of ['account.key', 'certificates/a.test.key'])
        assert.equal(
          spawnSync('stat', ['-c', '%a', join(store, caFolder!, f)], {
            encoding: 'utf8',
          }).stdout.trim(),
          '600',
        );

      await portico.stop();
      portico = await startPortico(file, ca);
      await portico.waitFor(/a\.test: using the stored certificate/);
      await portico.waitFor(/b\.test: using the stored certificate/);
      assert.doesNotMatch(portico.output(), /a\.test: ordering/);
      assert.equal((await served(ports.https, 'a.test', root)).cn, 'a.test');
    });

    it('HTTP-01 on the plain listener, before the HTTPS redirect; a reload that adds a host orders its certificate', async (t) => {
      const adminPort = await freePort();
      const extra = `  useAutomaticTLSHTTPChallenge: true\n  admin:\n    listen: ${adminPort}\n    status: true\n`;
      const { ports, ca, store, file } = await setUp(['h.test'], extra);
      const portico = await startPortico(file, ca);
      t.after(() => portico.stop());
      await portico.waitFor(/h\.test: certificate obtained/);
      const root = await ca.root();
      assert.equal((await served(ports.https, 'h.test', root)).cn, 'h.test');
      // Plain HTTP otherwise redirects to HTTPS: the challenge path was answered before that.
      const plain = await fetch(`http://127.0.0.1:${ports.http}/`, {
        redirect: 'manual',
        headers: { host: 'h.test' },
      });
      assert.equal(plain.status, 301);

      writeFileSync(file, configFor(ports, ca, store, ['h.test', 'new.test'], extra));
      portico.child.kill('SIGHUP');
      await portico.waitFor(/new\.test: certificate obtained/);
      assert.equal((await served(ports.https, 'new.test', root)).cn, 'new.test');
      const status = (await (await fetch(`http://127.0.0.1:${adminPort}/status`)).json()) as {
        certificates: { name: string; state: string; expires: string; renews: string }[];
      };
      assert.deepEqual(status.certificates.map((c) => [c.name, c.state]).sort(), [
        ['h.test', 'valid'],
        ['new.test', 'valid'],
      ]);
      for (const c of status.certificates) assert.ok(Date.parse(c.renews) < Date.parse(c.expires));
    });

    it('renews a certificate near its end and swaps it live: no handshake fails meanwhile', async (t) => {
      const { ports, ca, store, file } = await setUp(['r.test']);
      // A stored certificate with a day left of a 21-day life: served at once, renewed at once.
      const portico0 = await startPortico(file, ca);
      await portico0.waitFor(/r\.test: certificate obtained/);
      await portico0.stop();
      const [caFolder] = readdirSync(store);
      const certs = join(store, caFolder!, 'certificates');
      const made = spawnSync(
        'python3',
        ['-c', SHORT_LIVED, join(certs, 'r.test.crt'), join(certs, 'r.test.key')],
        { encoding: 'utf8' },
      );
      assert.equal(made.status, 0, made.stderr);
      chmodSync(join(certs, 'r.test.key'), 0o600);
      const portico = await startPortico(file, ca);
      t.after(() => portico.stop());
      await portico.waitFor(/r\.test: using the stored certificate/);
      // Handshakes, eight at a time, from before the renewal to after it.
      const root = await ca.root();
      let failures = 0;
      let handshakes = 0;
      const seen = new Set<string>();
      let renewed = false;
      const worker = async () => {
        while (!renewed) {
          await new Promise<void>((resolve) => {
            const socket = tlsConnect(
              {
                host: '127.0.0.1',
                port: ports.https,
                servername: 'r.test',
                rejectUnauthorized: false,
              },
              () => {
                seen.add(String(socket.getPeerCertificate().issuer?.CN));
                handshakes++;
                socket.end();
                resolve();
              },
            );
            socket.on('error', () => {
              failures++;
              resolve();
            });
          });
        }
      };
      const load = Promise.all(Array.from({ length: 8 }, worker));
      await portico.waitFor(/r\.test: certificate renewed/);
      // The load goes on until it has crossed the swap.
      await until(() => [...seen].some((issuer) => /Pebble/.test(issuer)), {
        what: 'a handshake served the renewed certificate',
      });
      renewed = true;
      await load;
      assert.equal(failures, 0, `${failures} of ${handshakes} handshakes failed`);
      assert.ok(seen.has('short-lived'), 'the old certificate was served before the renewal');
      assert.ok(
        [...seen].some((issuer) => /Pebble/.test(issuer)),
        'the new one after it',
      );
      assert.match((await served(ports.https, 'r.test', root)).issuer, /Pebble/);
    });

    it('reports a corrupt stored key and orders a new certificate; a corrupt account key is replaced', async (t) => {
      const { ports, ca, store, file } = await setUp(['k.test']);
      const first = await startPortico(file, ca);
      await first.waitFor(/k\.test: certificate obtained/);
      await first.stop();
      const [caFolder] = readdirSync(store);
      writeFileSync(join(store, caFolder!, 'certificates', 'k.test.key'), 'not a key');
      writeFileSync(join(store, caFolder!, 'account.key'), 'garbage');
      const portico = await startPortico(file, ca);
      t.after(() => portico.stop());
      await portico.waitFor(
        /k\.test: the stored certificate is not usable \(.*\); ordering a new one/,
      );
      await portico.waitFor(
        /the stored ACME account key is not a PEM private key; a new account key is made/,
      );
      await portico.waitFor(/k\.test: certificate obtained/);
      assert.equal((await served(ports.https, 'k.test', await ca.root())).cn, 'k.test');
      assert.match(readFileSync(join(store, caFolder!, 'account.key'), 'utf8'), /PRIVATE KEY/);
    });
  },
);

/** Writes a self-signed certificate for r.test, issued 20 days ago and ending tomorrow. */
const SHORT_LIVED = `
import sys, datetime
from cryptography import x509
from cryptography.x509.oid import NameOID
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
key = ec.generate_private_key(ec.SECP256R1())
name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "r.test")])
issuer = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "short-lived")])
now = datetime.datetime.now(datetime.timezone.utc)
cert = (x509.CertificateBuilder().subject_name(name).issuer_name(issuer).public_key(key.public_key())
  .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=20))
  .not_valid_after(now + datetime.timedelta(days=1))
  .add_extension(x509.SubjectAlternativeName([x509.DNSName("r.test")]), critical=False)
  .sign(key, hashes.SHA256()))
open(sys.argv[1], "wb").write(cert.public_bytes(serialization.Encoding.PEM))
open(sys.argv[2], "wb").write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
`;
