// The time limits of HTTP/1 connections (src/server/http1-connections.ts), kept by sweeps rather
// than by Node (which keeps them only for a server that listens itself): a head within the header
// limit, a body within the request limit of its head, and for the HTTP/2 listener's HTTP/1.1
// fallback the next head within the keep-alive limit. A plain listener's late client is handed
// over for its 408; the fallback's connection is closed. Mocked clock and timers.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { afterEach, beforeEach, it, mock } from 'node:test';
import { Http1Connections } from '../../src/server/http1-connections.js';

const LIMITS = {
  headersTimeoutMs: 1000,
  requestTimeoutMs: 5000,
  keepAliveTimeoutMs: 400,
  checkIntervalMs: 100,
};
const SEND_TIMEOUT_MS = 60_000;

class FakeSocket extends EventEmitter {
  bytesRead = 0;
  writableLength = 0;
  destroyed = false;
  destroy(): void {
    this.destroyed = true;
    this.emit('close');
  }
}

interface Exchange {
  readonly req: { complete: boolean; socket: FakeSocket };
  writableFinished: boolean;
  shouldKeepAlive: boolean;
  headersSent: boolean;
}

let late: FakeSocket[];
let connections: Http1Connections;

beforeEach(() => {
  mock.timers.enable({ apis: ['setInterval', 'Date'] });
  late = [];
  connections = new Http1Connections(LIMITS, SEND_TIMEOUT_MS, (socket) => {
    late.push(socket as unknown as FakeSocket);
  });
});
afterEach(() => {
  connections.stop();
  mock.timers.reset();
});

/** The clock moved on by `ms`, a sweep's interval at a time (the mock dates every timer of one tick at its end). */
function advance(ms: number): void {
  for (let left = ms; left > 0; left -= LIMITS.checkIntervalMs)
    mock.timers.tick(Math.min(left, LIMITS.checkIntervalMs));
}

function open(fallback = false): FakeSocket {
  const socket = new FakeSocket();
  connections.add(socket as unknown as Socket, fallback);
  return socket;
}

/** A request whose head has just arrived on `socket`. */
function request(socket: FakeSocket, complete = true): Exchange {
  const exchange: Exchange = {
    req: { complete, socket },
    writableFinished: false,
    shouldKeepAlive: true,
    headersSent: false,
  };
  connections.request(
    exchange.req as unknown as IncomingMessage,
    exchange as unknown as ServerResponse,
  );
  return exchange;
}

it('hands over a plain connection whose head has not come within the header limit, once', () => {
  const socket = open();
  advance(900);
  assert.deepEqual(late, []);
  advance(200);
  assert.deepEqual(late, [socket]);
  advance(5000);
  assert.deepEqual(late, [socket]);
  assert.equal(socket.destroyed, false);
});

it('closes the HTTP/1.1 fallback’s connection whose head has not come within the header limit', () => {
  const socket = open(true);
  advance(1100);
  assert.deepEqual(late, []);
  assert.equal(socket.destroyed, true);
});

it('gives a request’s body the request limit from its head, and no limit once it is in', () => {
  const slow = open();
  const quick = open();
  advance(800);
  request(slow, false);
  const answered = request(quick, true);
  advance(4900);
  assert.deepEqual(late, []);
  advance(200);
  assert.deepEqual(late, [slow]);
  // A long response to a complete request is no one's limit here (the send timeout watches it).
  advance(30_000);
  assert.equal(answered.writableFinished, false);
  assert.deepEqual(late, [slow]);
});

it('after a response, leaves a silent plain connection to Node’s keep-alive limit, and gives a begun head the header limit', () => {
  const socket = open();
  const first = request(socket);
  first.writableFinished = true;
  advance(5000);
  assert.deepEqual(late, []);
  socket.bytesRead += 10;
  advance(1000);
  assert.deepEqual(late, []);
  advance(200);
  assert.deepEqual(late, [socket]);
});

it('after a response, closes the fallback’s connection whose next head has not come within the keep-alive limit', () => {
  const socket = open(true);
  const first = request(socket);
  first.writableFinished = true;
  advance(300);
  assert.equal(socket.destroyed, false);
  request(socket).writableFinished = true;
  advance(300);
  assert.equal(socket.destroyed, false);
  advance(300);
  assert.equal(socket.destroyed, true);
});

it('keeps no request limit for a connection Node’s parser let go of (CONNECT, Upgrade)', () => {
  const socket = open();
  connections.detach(socket as unknown as Socket);
  advance(10_000);
  assert.deepEqual(late, []);
  assert.equal(socket.destroyed, false);
});

it('closes a connection whose output has waited the send timeout without moving on', () => {
  const socket = open();
  request(socket);
  socket.writableLength = 1000;
  advance(SEND_TIMEOUT_MS - 100);
  assert.equal(socket.destroyed, false);
  advance(SEND_TIMEOUT_MS / 4 + 200);
  assert.equal(socket.destroyed, true);
});
