// OCSP stapling through Portico's HTTPS listener: the OCSP test PKI (a CA and a leaf certificate
// made by openssl whose Authority Information Access names `openssl ocsp` running on loopback);
// `openssl s_client -status` must see the stapled response. Skips without openssl, unless CI
// (then it fails).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { freePort, startServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';
import { SKIP, makePki, watchOcspRequests, type Pki } from '../tls/ocsp-pki.js';

let pki: Pki | undefined;
before(async () => {
  if (!SKIP) pki = await makePki();
});
after(() => pki?.close());

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

it('staples the responder’s answer for the served certificate', { skip: SKIP }, async () => {
  assert.ok(pki, 'the PKI was not made');
  const { dir, responderPort } = pki;
  mkdirSync(join(dir, 'www'));
  writeFileSync(join(dir, 'www', 'index.html'), 'stapled');
  writeFileSync(join(dir, 'chain.pem'), pki.pem.good + pki.caPem);
  const sport = await freePort();
  const config = (extra: string): string =>
    `global:\n  sport: "127.0.0.1:${sport}"\n  secure: true\n${extra}  cert: ${join(dir, 'chain.pem')}\n  key: ${join(dir, 'good.key')}\n  wwwroot: ${join(dir, 'www')}\n`;
  const requests = watchOcspRequests();
  try {
    const s = await startServer(config(''));
    try {
      // The staple is fetched in the background at start; handshakes never wait for it.
      await until(() => requests.count(responderPort), { what: 'the fetch at start' });
      const output = await until(() => sClient(sport), {
        ok: (text) => /OCSP Response Status: successful/.test(text),
        what: 'a stapled response',
      });
      assert.match(output, /Cert Status: good/);
    } finally {
      await s.close();
    }
    const fetched = requests.count(responderPort);
    const off = await startServer(config('  enableOCSPStapling: false\n'));
    try {
      assert.match(await sClient(sport), /OCSP response: no response sent/);
      // A fetch, at start or for the handshake, would have been announced by now.
      assert.equal(requests.count(responderPort), fetched, 'no fetch with stapling off');
    } finally {
      await off.close();
    }
  } finally {
    requests.stop();
  }
});
