// OCSP stapling on a real TLS server on 127.0.0.1, against `openssl ocsp` and a broken responder.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import tls from 'node:tls';

import { parseOcspResponse } from '../../src/tls/ocsp-codec.js';
import { MAX_RESPONSE_BYTES } from '../../src/tls/ocsp-fetch.js';
import { OcspStapler, type OcspStaplerOptions, type StapleEvent } from '../../src/tls/ocsp.js';
import { until } from '../helpers/wait.js';
import { SKIP, certIdOf, makePki, watchOcspRequests, type Leaf, type Pki } from './ocsp-pki.js';

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
const fakePort = (): number => (fake.address() as AddressInfo).port;

let pki: Pki | undefined;

before(async () => {
  if (SKIP) return;
  fake.listen(0, '127.0.0.1');
  await once(fake, 'listening');
  pki = await makePki(fakePort());
});

after(() => {
  pki?.close();
  for (const socket of fakeSockets) socket.destroy();
  if (fake.listening) fake.close();
});

function thePki(): Pki {
  assert.ok(pki, 'the PKI was not made');
  return pki;
}

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

/** What the stapler answers a handshake for `certificate`, asked directly. */
function staple(
  stapler: OcspStapler,
  certificate: Buffer,
  issuer: Buffer | null,
): Promise<Buffer | undefined> {
  return new Promise((resolve) =>
    stapler.onOcspRequest(certificate, issuer, (err, der) => resolve(err ? undefined : der)),
  );
}

/** Handshakes until one gets a staple. */
async function stapled(p: Pki, port: number): Promise<Buffer> {
  const response = await until(async () => (await handshake(p, port)).response, {
    what: 'a stapled response',
  });
  assert.ok(response);
  return response;
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

/** Lets the tick in which Node announces a request started go by. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('OCSP stapling on 127.0.0.1', { skip: SKIP }, () => {
  it('the first handshake gets no staple and starts the fetch; later ones get "good" (s_client and Node)', async () => {
    const p = thePki();
    const s = await stage(p, 'good');
    try {
      const first = await sClient(s.port);
      assert.match(first, /OCSP response: no response sent/);
      const response = await stapled(p, s.port);
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
    const requests = watchOcspRequests();
    const s = await stage(p, 'good');
    try {
      s.stapler.prefetch(p.pem.good + p.caPem);
      // Before any handshake: the fetch is prefetch's doing.
      await until(() => requests.count(p.responderPort), { what: 'the fetch prefetch starts' });
      await until(() => staple(s.stapler, p.der.good, p.caDer), { what: 'the cached response' });
      const output = await sClient(s.port);
      assert.match(output, /OCSP Response Status: successful/);
      assert.match(output, /Cert Status: good/);
      const responses = await Promise.all([1, 2, 3].map(() => handshake(p, s.port)));
      const first = responses[0]?.response;
      assert.ok(first);
      for (const { response } of responses)
        assert.deepEqual(response, first, 'the same cached DER');
      assert.equal(requests.count(p.responderPort), 1, 'one fetch for all the handshakes');
      assert.deepEqual(s.logs, []);
    } finally {
      requests.stop();
      await s.close();
    }
  });

  it('a follower never fetches: it tells its fetcher of a certificate once and staples what it is given', async () => {
    const p = thePki();
    const requests = watchOcspRequests();
    const published: StapleEvent[] = [];
    const fetcher = new OcspStapler({ log: () => undefined, publish: (e) => published.push(e) });
    const told: [Buffer, Buffer | null][] = [];
    const s = await stage(p, 'good', { tellFetcher: (...shown) => told.push(shown) });
    try {
      s.stapler.prefetch(p.pem.good + p.caPem);
      for (let i = 0; i < 2; i++) assert.equal((await handshake(p, s.port)).response, undefined);
      assert.deepEqual(told, [[p.der.good, p.caDer]]);
      fetcher.shownByFollower(p.der.good, p.caDer);
      await until(() => published.length === 1, { what: 'the fetcher’s response' });
      const event = published[0]!;
      s.stapler.staple(event);
      assert.deepEqual((await handshake(p, s.port)).response, event.staple?.der);
      assert.deepEqual(fetcher.current(), [event]);
      // A follower that forgot it is told again when it passes the certificate on once more.
      fetcher.shownByFollower(p.der.good, p.caDer);
      assert.deepEqual(published, [event, event]);
      s.stapler.staple({ fingerprint: event.fingerprint, staple: undefined });
      assert.equal((await handshake(p, s.port)).response, undefined);
      assert.equal(requests.count(p.responderPort), 1, 'the fetcher’s one fetch');
      assert.deepEqual(s.logs, []);
    } finally {
      requests.stop();
      fetcher.close();
      await s.close();
    }
  });

  it('refreshes in the background, once, when the refresh margin before nextUpdate is reached', async (t) => {
    const p = thePki();
    // The responder's answers are valid for 5 minutes from thisUpdate: this margin makes the
    // refresh due 3 s after thisUpdate, on the mocked clock.
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: Date.now() });
    const requests = watchOcspRequests();
    const s = await stage(p, 'good', { refreshMarginMs: 5 * 60_000 - 3000 });
    try {
      s.stapler.prefetch(p.pem.good + p.caPem);
      const first = await until(() => staple(s.stapler, p.der.good, p.caDer), {
        what: 'the first response',
      });
      assert.ok(first);
      const due = parseOcspResponse(first, certIdOf(p, 'good')).thisUpdate.getTime() + 3000;
      t.mock.timers.tick(due - Date.now() - 1);
      await nextTurn();
      assert.equal(requests.count(p.responderPort), 1, 'not before it is due');
      t.mock.timers.tick(1);
      await nextTurn();
      assert.equal(requests.count(p.responderPort), 2, 'when it is due');
      // A new signature makes new bytes even within the same second.
      const refreshed = await until(() => staple(s.stapler, p.der.good, p.caDer), {
        ok: (response) => response !== undefined && !response.equals(first),
        what: 'the refreshed response',
      });
      assert.ok(refreshed);
      assert.equal(parseOcspResponse(refreshed, certIdOf(p, 'good')).certStatus, 'good');
      assert.deepEqual((await handshake(p, s.port)).response, refreshed);
      assert.equal(requests.count(p.responderPort), 2);
      assert.deepEqual(s.logs, []);
    } finally {
      requests.stop();
      await s.close();
    }
  });

  for (const leaf of ['revoked', 'unknown'] as const) {
    it(`a certificate the responder calls ${leaf} is not stapled, and logged once`, async () => {
      const p = thePki();
      const s = await stage(p, leaf);
      try {
        s.stapler.prefetch(p.pem[leaf] + p.caPem);
        await until(() => s.logs.length > 0, { what: 'the log line' });
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
      for (let i = 0; i < 3; i++) assert.equal(await staple(stapler, p.der.good, null), undefined);
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

  it('a responder that is down: handshakes at once, one failure logged, then a retry after 1 min instead of a fetch per handshake', async (t) => {
    const p = thePki();
    fakeMode = 'reset';
    fakeConnections = 0;
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: Date.now() });
    const requests = watchOcspRequests();
    const s = await stage(p, 'fake');
    const quick = async (): Promise<void> => {
      const { response, ms } = await handshake(p, s.port);
      assert.equal(response, undefined);
      assert.ok(ms < 1000, `handshake took ${ms} ms`);
    };
    try {
      // The second handshake comes while the first one's fetch is likely still under way.
      await quick();
      await quick();
      await until(() => s.logs.length > 0, { what: 'the failure to be logged' });
      for (let i = 0; i < 3; i++) await quick();
      // Node announces a request before the handshake that started it completes: none did.
      assert.equal(requests.count(fakePort()), 1, 'one fetch; the retry waits for its back-off');
      assert.equal(fakeConnections, 1);
      assert.equal(s.logs.length, 1, s.logs.join('\n'));
      assert.match(
        s.logs[0] ?? '',
        /^OCSP stapling: could not get the status of certificate "CN=fake" .* from http:\/\/127\.0\.0\.1:\d+\/: socket hang up; asking again in 1 min, then less often$/,
      );
      // The retry timer was set as the failure was logged.
      t.mock.timers.tick(60_000 - 1);
      await nextTurn();
      assert.equal(requests.count(fakePort()), 1);
      t.mock.timers.tick(1);
      await nextTurn();
      assert.equal(requests.count(fakePort()), 2, 'the retry, 1 min later');
      await until(() => fakeConnections === 2, { what: 'the retry to reach the responder' });
      assert.equal(s.logs.length, 1, 'a streak of failures is logged once');
    } finally {
      requests.stop();
      await s.close();
    }
  });

  it('a responder that never answers does not hold up handshakes, and the fetch times out', async () => {
    const p = thePki();
    fakeMode = 'hang';
    fakeConnections = 0;
    const requests = watchOcspRequests();
    // Handshakes are allowed half the fetch's time limit: enough on a loaded CI machine, and still
    // proof that none of them waited for the fetch.
    const s = await stage(p, 'fake', { fetchTimeoutMs: 3000 });
    try {
      const { response, ms } = await handshake(p, s.port);
      assert.equal(response, undefined);
      assert.ok(ms < 1500, `handshake took ${ms} ms`);
      await until(() => fakeConnections === 1, { what: 'the fetch to start' });
      assert.ok((await handshake(p, s.port)).ms < 1500, 'while the fetch is pending');
      assert.equal(requests.count(fakePort()), 1, 'no second fetch while one is pending');
      await until(() => s.logs.length > 0, { what: 'the timeout' });
      assert.equal(s.logs.length, 1, s.logs.join('\n'));
      assert.match(s.logs[0] ?? '', /: no complete answer within 3000 ms; asking again in 1 min/);
      await until(() => fakeSockets.size === 0, { what: 'the connection to be closed' });
    } finally {
      requests.stop();
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
      await until(() => fakeConnections === 1, { what: 'the fetch to start' });
      s.stapler.close();
      await until(() => fakeSockets.size === 0, { what: 'the connection to be closed' });
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
      await until(() => s.logs.length > 0, { what: 'the failure' });
      assert.match(s.logs[0] ?? '', /: the response is larger than 64 KiB; asking again/);
      assert.equal((await handshake(p, s.port)).response, undefined);
    } finally {
      await s.close();
    }
  });
});
