// A worker's share of the FastCGI bounds: with the server's connections and queue divided among
// worker processes, one worker opens at most its part toward the application, and queues at most
// its part of the waiting requests before answering 503.
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { it } from 'node:test';
import { FcgiConnections } from '../../src/modules/fcgi/connections.js';
import { isHttpError } from '../../src/http/http-error.js';
import { parseSocketAddress } from '../../src/gateway/socket-address.js';
import { until } from '../helpers/wait.js';

it('opens at most its share of connections and queues at most its share of requests', async (t) => {
  const accepted: Socket[] = [];
  const app = createServer((socket) => accepted.push(socket));
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    accepted.forEach((s) => s.destroy());
    app.close();
  });
  const { port } = app.address() as { port: number };
  const pool = new FcgiConnections(parseSocketAddress(`tcp://127.0.0.1:${port}`), 5_000, {
    connections: 2,
    waiting: 1,
    keep: false,
  });
  t.after(() => pool.close());
  const borrower = { fresh: false, client: undefined };
  const lent = await Promise.all([pool.acquire(borrower), pool.acquire(borrower)]);
  assert.equal(lent.length, 2);
  let third: unknown;
  void Promise.resolve(pool.acquire(borrower)).then((c) => (third = c));
  await assert.rejects(Promise.resolve(pool.acquire(borrower)), (e) => {
    assert.ok(isHttpError(e) && e.status === 503, String(e));
    return true;
  });
  assert.equal(third, undefined);
  await until(() => accepted.length, { ok: (n) => n === 2, what: 'the two connections accepted' });
  lent.forEach((c) => c.socket.destroy());
});
