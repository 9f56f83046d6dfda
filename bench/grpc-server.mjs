// The gRPC backend of bench/grpc.sh: @grpc/grpc-js serving test/fixtures/grpc/echo.proto's Unary
// (the note echoed back) on two ports of one server, h2c and TLS (the test certificate).
// Usage: node grpc-server.mjs H2C_PORT TLS_PORT
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { readFileSync } from 'node:fs';

const [h2cPort, tlsPort] = process.argv.slice(2);
const definition = protoLoader.loadSync('test/fixtures/grpc/echo.proto');
const { Echo } = grpc.loadPackageDefinition(definition).portico.test;
const server = new grpc.Server();
server.addService(Echo.service, {
  Unary: (call, done) => done(null, call.request),
});
const tls = grpc.ServerCredentials.createSsl(null, [
  {
    cert_chain: readFileSync('test/fixtures/tls/server.crt'),
    private_key: readFileSync('test/fixtures/tls/server.key'),
  },
]);
const bind = (port, credentials) =>
  new Promise((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${port}`, credentials, (e) => (e ? reject(e) : resolve())),
  );
await bind(h2cPort, grpc.ServerCredentials.createInsecure());
await bind(tlsPort, tls);
console.log('serving');
