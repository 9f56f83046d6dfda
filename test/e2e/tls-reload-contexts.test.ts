// TLS reloads make one secure context per certificate (issue 15 point 4): the listener's, made once
// per reload, plus one for checking the TLS settings. Before, the checks, the compiled Plan and the
// listener each made their own (7 contexts per reload for 3 certificates, against 4 now); RSS over
// 1,000 reloads is measured by `node bench/reloads.mjs 1000 --tls`.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import tls, { connect as tlsConnect } from 'node:tls';
import { freePort, startServer } from '../helpers/server.js';
import { TLS } from '../helpers/tls.js';

it('a TLS reload makes one secure context per certificate (plus one for the settings), and serves them', async (t) => {
  const sport = await freePort();
  const s = await startServer(
    `global:\n  sport: "127.0.0.1:${sport}"\n  secure: true\n  cert: ${TLS}/server.crt\n  key: ${TLS}/server.key\n` +
      `  sni:\n    example.com:\n      cert: ${TLS}/example.com.crt\n      key: ${TLS}/example.com.key\n` +
      `    "*.example.org":\n      cert: ${TLS}/example.org.crt\n      key: ${TLS}/example.org.key\n`,
  );
  t.after(() => s.close());
  let made = 0;
  const original = tls.createSecureContext;
  tls.createSecureContext = (...args) => {
    made++;
    return original(...args);
  };
  t.after(() => (tls.createSecureContext = original));
  const reloads = 5;
  for (let i = 0; i < reloads; i++) assert.equal((await s.server.reloadFromSource()).ok, true);
  assert.equal(made / reloads, 3 + 1);
  for (const [servername, cn] of [
    ['localhost', 'localhost'],
    ['example.com', 'example.com'],
    ['shop.example.org', '*.example.org'],
  ]) {
    const served = await new Promise<string>((resolve, reject) => {
      const socket = tlsConnect(
        { host: '127.0.0.1', port: sport, servername, rejectUnauthorized: false },
        () => {
          resolve(String(socket.getPeerCertificate().subject?.CN));
          socket.end();
        },
      );
      socket.on('error', reject);
    });
    assert.equal(served, cn);
  }
});
