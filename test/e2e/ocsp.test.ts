// OCSP stapling through Portico's HTTPS listener: a CA and a leaf certificate made by openssl whose
// Authority Information Access names `openssl ocsp` running on loopback; `openssl s_client -status`
// must see the stapled response. Skips without openssl, unless CI (then it fails).
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort, startServer } from '../helpers/server.js';

const hasOpenssl = spawnSync('openssl', ['version']).status === 0;
const dir = mkdtempSync(join(tmpdir(), 'portico-ocsp-'));
let responder: ChildProcess | undefined;
after(() => {
  responder?.kill();
  rmSync(dir, { recursive: true, force: true });
});

const openssl = (args: string[]) =>
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });

function startResponder(): Promise<number> {
  responder = spawn(
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
  let out = '';
  return new Promise((resolve, reject) => {
    responder!.stdout!.setEncoding('utf8').on('data', (t: string) => {
      out += t;
      const port = /ACCEPT .*:(\d+)/.exec(out)?.[1];
      if (port) resolve(Number(port));
    });
    responder!.once('exit', (code) => reject(new Error(`openssl ocsp exited ${code}`)));
  });
}

/** Asynchronous: the server under test runs in this process, so a blocking spawn would deadlock it. */
function sClient(port: number): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn(
      'openssl',
      ['s_client', '-connect', `127.0.0.1:${port}`, '-servername', 'localhost', '-status'],
      { stdio: ['pipe', 'pipe', 'ignore'], timeout: 10_000 },
    );
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (t: string) => (out += t));
    child.on('close', () => resolve(out));
    child.stdin.end();
  });
}

it(
  'staples the responder’s answer for the served certificate',
  {
    skip: !hasOpenssl && !process.env.CI ? 'openssl is not installed' : false,
  },
  async () => {
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    openssl([
      'req',
      '-x509',
      ...ec,
      '-subj',
      '/CN=OCSP Test CA',
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
    const issue = (name: string, serial: string, ext: string) => {
      writeFileSync(join(dir, `${name}.ext`), `basicConstraints = CA:false\n${ext}\n`);
      openssl([
        'req',
        ...ec,
        '-subj',
        `/CN=${name}`,
        '-keyout',
        `${name}.key`,
        '-out',
        `${name}.csr`,
      ]);
      openssl([
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
    writeFileSync(join(dir, 'index.txt'), 'V\t301231235959Z\t\t2002\tunknown\t/CN=localhost\n');
    const responderPort = await startResponder();
    issue(
      'localhost',
      '2002',
      `subjectAltName = DNS:localhost\nauthorityInfoAccess = OCSP;URI:http://127.0.0.1:${responderPort}`,
    );
    mkdirSync(join(dir, 'www'));
    writeFileSync(join(dir, 'www', 'index.html'), 'stapled');
    writeFileSync(
      join(dir, 'chain.pem'),
      readFileSync(join(dir, 'localhost.crt'), 'utf8') + readFileSync(join(dir, 'ca.crt'), 'utf8'),
    );

    const sport = await freePort();
    const s = await startServer(
      `global:\n  sport: "127.0.0.1:${sport}"\n  secure: true\n  cert: ${join(dir, 'chain.pem')}\n  key: ${join(dir, 'localhost.key')}\n  wwwroot: ${join(dir, 'www')}\n`,
    );
    try {
      // The staple is fetched in the background at start; handshakes never wait for it.
      let output = '';
      for (let i = 0; i < 40 && !/OCSP Response Status: successful/.test(output); i++) {
        await sleep(100);
        output = await sClient(sport);
      }
      assert.match(output, /OCSP Response Status: successful/);
      assert.match(output, /Cert Status: good/);
    } finally {
      await s.close();
    }
    const off = await startServer(
      `global:\n  sport: "127.0.0.1:${sport}"\n  secure: true\n  enableOCSPStapling: false\n  cert: ${join(dir, 'chain.pem')}\n  key: ${join(dir, 'localhost.key')}\n  wwwroot: ${join(dir, 'www')}\n`,
    );
    try {
      await sleep(300);
      assert.match(await sClient(sport), /OCSP response: no response sent/);
    } finally {
      await off.close();
    }
  },
);
