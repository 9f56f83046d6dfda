// OCSP stapling with `workers: 2`: the primary asks the responder once per certificate and every
// worker staples that answer, a worker started to replace a killed one too, with no new fetch.
// The certificate's responder is a relay on 127.0.0.1 that counts the requests and keeps each
// answer `openssl ocsp` gives.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import tls from 'node:tls';
import { runServing, type ServingCli } from '../helpers/cli.js';
import { request } from '../helpers/http.js';
import { freePort } from '../helpers/server.js';
import { logged, until } from '../helpers/wait.js';
import { SKIP, makePki, type Pki } from '../tls/ocsp-pki.js';

const skip = process.platform !== 'linux' ? 'kills worker processes by pid on Linux' : SKIP;

/** What the relay answered, in order: one entry per request it was sent. */
const answered: Buffer[] = [];
let pki: Pki | undefined;
const relay = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', async () => {
    const reply = await fetch(`http://127.0.0.1:${pki!.responderPort}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/ocsp-request' },
      body: Buffer.concat(chunks),
    });
    const der = Buffer.from(await reply.arrayBuffer());
    answered.push(der);
    res.writeHead(reply.status, { 'content-type': 'application/ocsp-response' }).end(der);
  });
});

// A test that fails half-way leaves no server behind: its launcher killed, the primary stops.
let cli: ServingCli | undefined;
before(async () => {
  if (skip) return;
  relay.listen(0, '127.0.0.1');
  await once(relay, 'listening');
  pki = await makePki((relay.address() as AddressInfo).port);
});
after(() => {
  cli?.child.kill('SIGKILL');
  pki?.close();
  relay.close();
});

interface Worker {
  pid: number;
  requests_total: number;
  restarts: number;
}

const workers = async (adminPort: number) =>
  (JSON.parse((await request(adminPort, '/status')).text) as { workers: Worker[] }).workers;

/** One TLS connection asking for a staple, and one request on it: the staple and who served. */
async function stapledBy(
  p: Pki,
  sport: number,
  adminPort: number,
): Promise<{ pid: number; staple: Buffer | null }> {
  const before = await workers(adminPort);
  let staple: Buffer | null = null;
  // tls.connect passes requestOCSP on to the TLSSocket; @types/node only declares it there.
  const options: tls.ConnectionOptions & tls.TLSSocketOptions = {
    host: '127.0.0.1',
    port: sport,
    ca: p.caPem,
    requestOCSP: true,
  };
  const socket = tls.connect(options);
  // Emitted before 'secureConnect', with null when the server staples nothing.
  socket.on('OCSPResponse', (der: Buffer | null) => (staple = der));
  await once(socket, 'secureConnect');
  socket.end('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
  socket.resume();
  await once(socket, 'close');
  // The worker whose count the request raised (one that replaced another started from 0).
  const pid = await until(
    async () =>
      (await workers(adminPort)).find(
        (w) => w.requests_total > (before.find((b) => b.pid === w.pid)?.requests_total ?? 0),
      )?.pid,
    { what: 'the worker that served the request' },
  );
  return { pid: pid!, staple };
}

/** Connections until every worker of `pids` has stapled one; the staple each sent. */
async function staplesFrom(
  p: Pki,
  sport: number,
  adminPort: number,
  pids: readonly number[],
): Promise<Map<number, Buffer>> {
  const staples = new Map<number, Buffer>();
  await until(
    async () => {
      const { pid, staple } = await stapledBy(p, sport, adminPort);
      if (staple !== null) staples.set(pid, staple);
      return pids.every((wanted) => staples.has(wanted));
    },
    { what: `a stapled handshake from each of workers ${pids.join(', ')}` },
  );
  return staples;
}

describe('OCSP stapling with workers: 2', { skip }, () => {
  it('is fetched once by the primary and stapled by every worker, a replacement too', async () => {
    assert.ok(pki, 'the PKI was not made');
    const [port, sport, adminPort] = [await freePort(), await freePort(), await freePort()];
    const file = join(pki.dir, 'portico.yaml');
    writeFileSync(join(pki.dir, 'chain.pem'), pki.pem.fake + pki.caPem);
    writeFileSync(
      file,
      `global:\n  port: "127.0.0.1:${port}"\n  sport: "127.0.0.1:${sport}"\n  secure: true\n  cert: ${join(pki.dir, 'chain.pem')}\n  key: ${join(pki.dir, 'fake.key')}\n  enableOCSPStapling: true\n  wwwroot: ${pki.dir}\n  workers: 2\n  admin:\n    listen: ${adminPort}\n    status: true\n`,
    );
    cli = await runServing(file);
    // The primary prefetches for the certificate file as it starts.
    await until(() => answered.length === 1, { what: 'the primary’s fetch' });
    const first = await workers(adminPort);
    assert.equal(first.length, 2);
    const staples = await staplesFrom(
      pki,
      sport,
      adminPort,
      first.map((w) => w.pid),
    );
    for (const staple of staples.values()) assert.deepEqual(staple, answered[0]);
    assert.equal(answered.length, 1, 'one request to the responder for the certificate');

    const [victim, survivor] = first;
    process.kill(victim!.pid, 'SIGKILL');
    await logged(cli.output, new RegExp(`worker ${victim!.pid} was killed by SIGKILL`));
    const replaced = await until(
      async () => (await workers(adminPort)).find((w) => w.restarts === 1),
      { what: 'a replacement worker' },
    );
    const again = await staplesFrom(pki, sport, adminPort, [replaced!.pid, survivor!.pid]);
    for (const staple of again.values()) assert.deepEqual(staple, answered[0]);
    assert.equal(answered.length, 1, 'no new request for the replacement');

    cli.child.kill('SIGTERM');
    assert.equal(await cli.exited, 0);
  });
});
