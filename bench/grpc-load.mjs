// A gRPC load client for bench/grpc.sh: unary calls of echo.proto with CONCURRENCY in flight on one
// channel for SECONDS. Prints "calls/s errors".
// Usage: node grpc-load.mjs HOST:PORT h2c|tls CONCURRENCY SECONDS
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { readFileSync } from 'node:fs';

const [target, mode, concurrency, seconds] = process.argv.slice(2);
const definition = protoLoader.loadSync('test/fixtures/grpc/echo.proto');
const { Echo } = grpc.loadPackageDefinition(definition).portico.test;
const credentials =
  mode === 'tls'
    ? grpc.credentials.createSsl(readFileSync('test/fixtures/tls/ca.crt'))
    : grpc.credentials.createInsecure();
const client = new Echo(target, credentials, {
  'grpc.ssl_target_name_override': 'localhost',
  'grpc.default_authority': 'localhost',
});
const note = { text: 'x'.repeat(64), count: 1 };
const end = Date.now() + Number(seconds) * 1000;
let calls = 0;
let errors = 0;
let running = Number(concurrency);

function call() {
  if (Date.now() >= end) {
    if (--running === 0) {
      console.log(`${Math.round(calls / Number(seconds))} ${errors}`);
      client.close();
    }
    return;
  }
  client.Unary(note, (error) => {
    if (error) errors++;
    else calls++;
    call();
  });
}

for (let i = 0; i < running; i++) call();
