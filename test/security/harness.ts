// What every attack test asserts of the server process once the attack is over (still running,
// its descriptors back to what they were before, its memory within a bound of that), and a raw
// HTTP/1.1 exchange that tells a connection the server closed from one the test gave up on.
import assert from 'node:assert/strict';
import { connect as http2Connect, type ClientHttp2Session, type Settings } from 'node:http2';
import { connect } from 'node:net';
import type { TestContext } from 'node:test';
import { TEST_CA } from '../helpers/tls.js';
import { until } from '../helpers/wait.js';
import type { PorticoProcess } from './portico-process.js';

/**
 * How far resident memory may stay above the baseline after an attack. V8 keeps for a while the
 * heap a burst grew, and the first seconds after start-up move by as much: five runs of these
 * files measured at most +18.5 MB (in a server's first test) and +13.5 MB after rapid reset, +7 MB
 * otherwise. It catches memory kept on the scale of the attacks (forty 1 MB heads, the 64 MB an
 * HPACK bomb decodes to), not a small leak per request, which needs a longer run than fits here.
 */
export const RSS_SLACK = 40 * 1024 * 1024;

export interface Baseline {
  readonly fds: number;
  readonly rss: number;
}

/**
 * Descriptors as the server started (its listeners and Node's own), memory once `warm` has made
 * it load what the attacks use; the descriptors `warm` opened must have closed again, or the
 * baseline would hide a leak.
 */
export async function baseline(p: PorticoProcess, warm: () => Promise<void>): Promise<Baseline> {
  const fds = p.fds();
  await warm();
  await until(p.fds, {
    ok: (n) => n <= fds,
    what: `descriptors back to the ${fds} open before the warm-up`,
  });
  return { fds, rss: p.rss() };
}

/**
 * Alive, descriptors back to the baseline (within `ms`), memory within RSS_SLACK of it; what was
 * measured goes to the test's diagnostics.
 */
export async function assertRecovered(
  t: TestContext,
  p: PorticoProcess,
  base: Baseline,
  ms = 10_000,
): Promise<void> {
  assert.ok(p.alive(), `the server process exited:\n${p.stderr()}`);
  const fds = await until(p.fds, {
    ok: (n) => n <= base.fds,
    ms,
    what: `descriptors back to the ${base.fds} open before the attack`,
  });
  t.diagnostic(`descriptors ${fds} (baseline ${base.fds})`);
  // What an attack left dead in the heap goes at the server's collection after a surge, within
  // two of its 2 s checks once no request comes in; assertMemory says what was measured.
  await until(p.rss, { ok: (n) => n <= base.rss + RSS_SLACK, ms: MEMORY_SETTLE_MS }).catch(
    () => undefined,
  );
  assertMemory(t, p, base);
}

const MEMORY_SETTLE_MS = 10_000;

/** Alive, and resident memory within RSS_SLACK of the baseline. */
export function assertMemory(t: TestContext, p: PorticoProcess, base: Baseline): void {
  assert.ok(p.alive(), `the server process exited:\n${p.stderr()}`);
  const rss = p.rss();
  t.diagnostic(`RSS ${mb(rss)} MB (baseline ${mb(base.rss)} MB)`);
  assert.ok(
    rss <= base.rss + RSS_SLACK,
    `RSS ${mb(rss)} MB, ${mb(base.rss)} MB before the attack (slack ${mb(RSS_SLACK)} MB)`,
  );
}

function mb(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}

export interface Exchange {
  /** Everything the server sent, as latin1. */
  readonly data: string;
  /** Whether the server closed the connection within the time allowed. */
  readonly closed: boolean;
  readonly ms: number;
}

/** Writes `bytes` on a new connection and reads until the server closes it or `ms` pass. */
export function exchange(port: number, bytes: string | Buffer, ms = 3000): Promise<Exchange> {
  return new Promise((resolve) => {
    const started = Date.now();
    let data = '';
    let closed = true;
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    const timer = setTimeout(() => {
      closed = false;
      socket.destroy();
    }, ms);
    socket.setEncoding('latin1').on('data', (d: string) => (data += d));
    // A reset (the server closing with unread bytes) is a close too.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ data, closed, ms: Date.now() - started });
    });
  });
}

/** The status lines of every response in `data`. */
export function statusLines(data: string): string[] {
  return data.match(/HTTP\/1\.1 \d{3} [^\r\n]*/g) ?? [];
}

/** An HTTP/2 connection to a `tls` server's `sport`, named localhost; its errors are ignored. */
export function h2Connect(sport: number, settings: Settings = {}): ClientHttp2Session {
  const session = http2Connect(`https://localhost:${sport}`, {
    ca: TEST_CA,
    host: '127.0.0.1',
    settings,
  } as never);
  session.on('error', () => undefined);
  return session;
}

/** One GET on a fresh HTTP/2 connection: the body. */
export async function h2Body(sport: number, path: string): Promise<Buffer> {
  const session = h2Connect(sport);
  try {
    const chunks: Buffer[] = [];
    for await (const chunk of session.request({ ':path': path })) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  } finally {
    session.close();
  }
}
