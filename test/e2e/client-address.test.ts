// Who the client is, with enableIPSpoofing (issue 16 point 3): a real connection sends a forged
// X-Forwarded-For, from a peer that is not a trusted proxy and from one that is. The blocklist
// shows which address Portico believed. Every connection here comes from 127.0.0.1.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { raw } from '../helpers/http.js';
import { startServer } from '../helpers/server.js';

const www = mkdtempSync(join(tmpdir(), 'portico-client-address-'));
writeFileSync(join(www, 'index.html'), 'hello');
after(() => rmSync(www, { recursive: true, force: true }));

async function statusFor(config: string, forwardedFor: string): Promise<string | undefined> {
  const s = await startServer(`global:\n  wwwroot: ${www}\n  enableIPSpoofing: true\n${config}`);
  try {
    const reply = await raw(
      s.port,
      `GET / HTTP/1.1\r\nHost: a.test\r\nX-Forwarded-For: ${forwardedFor}\r\nConnection: close\r\n\r\n`,
    );
    return /^HTTP\/1\.1 (\d{3}) /.exec(reply)?.[1];
  } finally {
    await s.close();
  }
}

describe('X-Forwarded-For with enableIPSpoofing', () => {
  it('without trustedProxies, any client names itself (Ferron’s behaviour, which validate warns about)', async () => {
    // The blocked peer gets in by naming another address.
    assert.equal(await statusFor('  blocklist: [127.0.0.1]\n', '198.51.100.7'), '200');
  });

  it('from a peer that is not a trusted proxy, the header is ignored', async () => {
    const config = '  blocklist: [127.0.0.1]\n  trustedProxies: [10.0.0.0/8]\n';
    assert.equal(await statusFor(config, '198.51.100.7'), '403');
  });

  it('from a trusted proxy, the client is the rightmost address that is not a trusted proxy', async () => {
    const trusted = '  trustedProxies: [127.0.0.1, 10.0.0.0/8]\n';
    const blocked = `${trusted}  blocklist: [198.51.100.7]\n`;
    // The proxy appended the real client (198.51.100.7) after what the client forged.
    assert.equal(await statusFor(blocked, '203.0.113.1, 198.51.100.7'), '403');
    // Trusted hops on the right are walked past.
    assert.equal(await statusFor(blocked, '198.51.100.7, 10.1.2.3, 127.0.0.1'), '403');
    // A forged leftmost entry is not believed: the client is 203.0.113.1, not blocked.
    assert.equal(await statusFor(blocked, '198.51.100.7, 203.0.113.1'), '200');
    // Nothing but trusted proxies: the leftmost.
    assert.equal(
      await statusFor(`${trusted}  blocklist: [10.9.9.9]\n`, '10.9.9.9, 127.0.0.1'),
      '403',
    );
  });

  it('an invalid address where the client is read gets 400', async () => {
    const trusted = '  trustedProxies: [127.0.0.1]\n';
    assert.equal(await statusFor(trusted, '198.51.100.7, not-an-ip'), '400');
  });
});
