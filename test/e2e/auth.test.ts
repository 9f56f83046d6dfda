// nonStandardCodes end to end: basic authentication against `users` (Argon2id, scrypt, PBKDF2),
// realms, userList, brute-force lock-out and its end, redirects with Rust-style replacements,
// other codes, url versus regex matching, the `users` IP lists (clients simulated through
// X-Forwarded-For with enableIPSpoofing), the access log. Memory: auth-memory.test.ts.
import assert from 'node:assert/strict';
import { randomBytes, scryptSync, pbkdf2Sync } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { hashPassword } from '../../src/auth/password.js';
import { request, type Reply } from '../helpers/http.js';
import { startServer, type RunningServer } from '../helpers/server.js';
import { logged } from '../helpers/wait.js';

const root = mkdtempSync(join(tmpdir(), 'portico-auth-'));
const www = join(root, 'www');
const accessLog = join(root, 'access.log');
for (const d of ['private', 'nobrute', 'new', 'gone']) mkdirSync(join(www, d), { recursive: true });
for (const f of [
  'index.html',
  'private/file.txt',
  'private/admin.txt',
  'alice-only.txt',
  'zoe.txt',
  'both.txt',
  'ip-limited.txt',
  'ip-auth.txt',
  'nobrute/secret.txt',
  'forbidden.txt',
]) {
  writeFileSync(join(www, f), `content of ${f}`);
}

const b64 = (b: Buffer) => b.toString('base64').replace(/=+$/, '');
// Cheap PHC hashes in password-auth's form (the KDF takes the B64-decoded salt), to keep tests fast.
function scryptPhc(password: string): string {
  const salt = randomBytes(16);
  return `$scrypt$ln=10,r=8,p=1$${b64(salt)}$${b64(scryptSync(password, salt, 32, { N: 1024, r: 8, p: 1 }))}`;
}
function pbkdf2Phc(password: string): string {
  const salt = randomBytes(16);
  return `$pbkdf2-sha256$i=1000,l=32$${b64(salt)}$${b64(pbkdf2Sync(password, salt, 1000, 32, 'sha256'))}`;
}

const ALICE = 'wonderland';
const BOB = 'builder:with:colons';
const JURGEN = 'pässwort ✓';
const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;
// Header values reach Node's client as latin1 strings: one character per byte.
const asLatin1 = (text: string) => Buffer.from(text, 'utf8').toString('latin1');
const get = (
  s: RunningServer,
  path: string,
  headers: Record<string, string> = {},
): Promise<Reply> => request(s.port, path, { headers });
const from = (client: string, headers: Record<string, string> = {}) => ({
  'X-Forwarded-For': client,
  ...headers,
});

let s: RunningServer;
before(async () => {
  const users = [
    { name: 'alice', pass: await hashPassword(ALICE) },
    { name: 'bob', pass: scryptPhc(BOB) },
    { name: 'jürgen', pass: pbkdf2Phc(JURGEN) },
  ];
  s = await startServer(`
global:
  wwwroot: ${www}
  logFilePath: ${accessLog}
  enableIPSpoofing: true
  users: ${JSON.stringify(users)}
  nonStandardCodes:
    - scode: 401
      regex: "^/private(/|$)"
      realm: 'Private "area" \\ here'
    - scode: 403
      url: /private/admin.txt
    - scode: 401
      url: /alice-only.txt
      userList: [alice]
    - scode: 401
      url: /zoe.txt
      realm: Zoë's place
    - scode: 403
      url: /forbidden.txt
    - scode: 410
      regex: "^/gone/"
    - scode: 410
      regex: "[?&]gone=1(&|$)"
    - scode: 403
      regex: "^/never-matches"
      url: /both.txt
    - scode: 301
      regex: "^/old/(.*)"
      location: /new/$1
    - scode: 302
      url: /moved
      location: /target
    - scode: 307
      regex: "^/tmp/(?P<rest>[^?]*)"
      location: /t/\${rest}.html
    - scode: 308
      url: /perm
    - scode: 301
      regex: "^/keep/"
    - scode: 308
      regex: "^/suffix/(\\\\w+)"
      location: /s/$1x-\${1}x
    - scode: 302
      url: /cafe
      location: /café/menu
    - scode: 403
      url: /ip-limited.txt
      users: ["10.0.0.0/8", "2001:db8::/32", "192.0.2.77"]
    - scode: 401
      url: /ip-auth.txt
      users: ["192.0.2.0/24"]
    - scode: 401
      regex: "^/nobrute/"
      disableBruteProtection: true
    - scode: 418
      url: /teapot
`);
});
after(async () => {
  await s.close();
  rmSync(root, { recursive: true, force: true });
});

describe('basic authentication', () => {
  it('no credentials: 401 with the realm, quotes and backslashes escaped', async () => {
    const r = await get(s, '/private/file.txt');
    assert.equal(r.status, 401);
    assert.equal(
      r.headers['www-authenticate'],
      'Basic realm="Private \\"area\\" \\\\ here", charset="UTF-8"',
    );
    assert.doesNotMatch(r.text, /content of/);
  });

  it("the realm is sent in UTF-8; the default realm is Portico's", async () => {
    const r = await get(s, '/zoe.txt');
    assert.equal(
      r.headers['www-authenticate'],
      asLatin1('Basic realm="Zoë\'s place", charset="UTF-8"'),
    );
    const d = await get(s, '/ip-auth.txt', from('192.0.2.1'));
    assert.equal(
      d.headers['www-authenticate'],
      'Basic realm="Portico HTTP Basic Authorization", charset="UTF-8"',
    );
  });

  it('the right password of each hash kind gets the file', async () => {
    for (const [user, password] of [
      ['alice', ALICE],
      ['bob', BOB],
      ['jürgen', JURGEN],
    ] as const) {
      const r = await get(
        s,
        '/private/file.txt',
        from('198.51.100.10', { Authorization: basic(user, password) }),
      );
      assert.equal(r.status, 200, user);
      assert.equal(r.text, 'content of private/file.txt');
    }
  });

  it('a wrong password or unknown user: 401 with the challenge, and an error-log line', async () => {
    for (const [user, password] of [
      ['alice', 'nope'],
      ['bob', 'builder'],
      ['nobody', ALICE],
      ['jürgen', 'pässwort'],
    ] as const) {
      const r = await get(
        s,
        '/private/file.txt',
        from('198.51.100.11', { Authorization: basic(user, password) }),
      );
      assert.equal(r.status, 401, `${user}:${password}`);
      assert.match(String(r.headers['www-authenticate']), /^Basic realm=/);
    }
    assert.match(
      s.stderr(),
      /Authorization failed for user "nobody" and client "198\.51\.100\.11"/,
    );
  });

  it('malformed Authorization: 401; bytes outside visible ASCII: 400', async () => {
    for (const value of [
      'Bearer abc',
      'Basic !!!',
      `Basic ${Buffer.from('nocolon').toString('base64')}`,
    ]) {
      assert.equal(
        (await get(s, '/private/file.txt', { Authorization: value })).status,
        401,
        value,
      );
    }
    assert.equal(
      (await get(s, '/private/file.txt', { Authorization: 'Basic caf\xe9' })).status,
      400,
    );
  });

  it('userList refuses a valid user who is not in it', async () => {
    assert.equal(
      (await get(s, '/alice-only.txt', from('198.51.100.12', { Authorization: basic('bob', BOB) })))
        .status,
      401,
    );
    assert.equal(
      (
        await get(
          s,
          '/alice-only.txt',
          from('198.51.100.12', { Authorization: basic('alice', ALICE) }),
        )
      ).status,
      200,
    );
  });

  it('a successful 401 goes on to the next entry', async () => {
    assert.equal((await get(s, '/private/admin.txt')).status, 401);
    assert.equal(
      (await get(s, '/private/admin.txt', { Authorization: basic('alice', ALICE) })).status,
      403,
    );
  });

  it('the access log shows the user', async () => {
    await get(
      s,
      '/private/file.txt?log=1',
      from('198.51.100.13', { Authorization: basic('bob', BOB) }),
    );
    const line = (
      await logged(() => readFileSync(accessLog, 'utf8'), /\/private\/file\.txt\?log=1/)
    )
      .split('\n')
      .find((l) => l.includes('/private/file.txt?log=1'))!;
    assert.match(line, /^198\.51\.100\.13 - bob \[/);
    assert.match(line, /" 200 /);
  });
});

describe('brute-force protection', () => {
  it('10 failures lock the client out: 429 without a challenge, even for the right password', async () => {
    const client = '203.0.113.10';
    for (let i = 0; i < 10; i++) {
      assert.equal(
        (
          await get(
            s,
            '/private/file.txt',
            from(client, { Authorization: basic('bob', `guess${i}`) }),
          )
        ).status,
        401,
        `guess ${i}`,
      );
    }
    const locked = await get(
      s,
      '/private/file.txt',
      from(client, { Authorization: basic('bob', BOB) }),
    );
    assert.equal(locked.status, 429);
    assert.equal(locked.headers['www-authenticate'], undefined);
    const retryAfter = Number(locked.headers['retry-after']);
    assert.ok(
      retryAfter > 290 && retryAfter <= 300,
      `Retry-After: ${retryAfter} (the 300 s window)`,
    );
    assert.equal(
      (await get(s, '/private/file.txt', from(client))).status,
      429,
      'even without credentials',
    );
    assert.match(s.stderr(), /Too many failed authorization attempts for client 203\.0\.113\.10/);
    // Other clients and unprotected paths are not affected.
    assert.equal(
      (
        await get(
          s,
          '/private/file.txt',
          from('203.0.113.11', { Authorization: basic('bob', BOB) }),
        )
      ).status,
      200,
    );
    assert.equal((await get(s, '/index.html', from(client))).status, 200);
  });

  it('parallel guesses are counted as they come: exactly 10 are tried', async () => {
    const client = '203.0.113.20';
    const replies = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        get(s, '/private/file.txt', from(client, { Authorization: basic('bob', `p${i}`) })),
      ),
    );
    assert.equal(replies.filter((r) => r.status === 401).length, 10);
    assert.equal(replies.filter((r) => r.status === 429).length, 20);
  });

  it('malformed headers and missing credentials are not counted', async () => {
    const client = '203.0.113.30';
    for (let i = 0; i < 12; i++) {
      await get(s, '/private/file.txt', from(client, { Authorization: 'Basic !!!' }));
      await get(s, '/private/file.txt', from(client));
    }
    assert.equal(
      (await get(s, '/private/file.txt', from(client, { Authorization: basic('bob', BOB) })))
        .status,
      200,
    );
  });

  it('IPv6 clients are counted per /64', async () => {
    for (let i = 0; i < 10; i++) {
      await get(
        s,
        '/private/file.txt',
        from(`2001:db8:5:5::${i + 1}`, { Authorization: basic('bob', 'wrong') }),
      );
    }
    assert.equal(
      (
        await get(
          s,
          '/private/file.txt',
          from('2001:db8:5:5:ffff::1', { Authorization: basic('bob', BOB) }),
        )
      ).status,
      429,
    );
    assert.equal(
      (
        await get(
          s,
          '/private/file.txt',
          from('2001:db8:5:6::1', { Authorization: basic('bob', BOB) }),
        )
      ).status,
      200,
    );
  });

  it('disableBruteProtection: failures never lock the client out', async () => {
    const client = '203.0.113.40';
    for (let i = 0; i < 15; i++) {
      assert.equal(
        (
          await get(
            s,
            '/nobrute/secret.txt',
            from(client, { Authorization: basic('bob', `x${i}`) }),
          )
        ).status,
        401,
      );
    }
    assert.equal(
      (await get(s, '/nobrute/secret.txt', from(client, { Authorization: basic('bob', BOB) })))
        .status,
      200,
    );
  });

  it('the lock-out ends by itself when the window has passed', async (t) => {
    // The guard's clock, moved past the window instead of waiting for it.
    t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
    const short = await startServer(
      `global:\n  wwwroot: ${www}\n  enableIPSpoofing: true\n  users: ${JSON.stringify([{ name: 'bob', pass: scryptPhc(BOB) }])}\n  nonStandardCodes:\n    - scode: 401\n      regex: "^/private/"\n`,
      { auth: { lockoutWindowMs: 1000 } },
    );
    try {
      for (let i = 0; i < 10; i++)
        await get(
          short,
          '/private/file.txt',
          from('203.0.113.50', { Authorization: basic('bob', 'no') }),
        );
      assert.equal(
        (
          await get(
            short,
            '/private/file.txt',
            from('203.0.113.50', { Authorization: basic('bob', BOB) }),
          )
        ).status,
        429,
      );
      t.mock.timers.tick(1200);
      assert.equal(
        (
          await get(
            short,
            '/private/file.txt',
            from('203.0.113.50', { Authorization: basic('bob', BOB) }),
          )
        ).status,
        200,
      );
    } finally {
      await short.close();
    }
  });
});

describe('redirects', () => {
  const redirect = async (path: string, status: number, location: string) => {
    const r = await get(s, path);
    assert.equal(r.status, status, path);
    assert.equal(r.headers.location, location, path);
    assert.equal(r.body.length, 0, path);
  };

  it('regex with location: the match through the replacement, text outside it dropped', async () => {
    await redirect('/old/a/b.html', 301, '/new/a/b.html');
    await redirect('/old/x?q=1', 301, '/new/x?q=1');
    await redirect('/tmp/report?x=1', 307, '/t/report.html');
    await redirect('/suffix/abc/more', 308, '/s/-abcx');
  });

  it('url with location: the location plus the query', async () => {
    await redirect('/moved', 302, '/target');
    await redirect('/moved?a=1&b=2', 302, '/target?a=1&b=2');
    await redirect('/cafe', 302, '/caf%C3%A9/menu');
  });

  it('without location: the current path and query', async () => {
    await redirect('/perm', 308, '/perm');
    await redirect('/perm?z=9', 308, '/perm?z=9');
    await redirect('/keep/thing?k=v', 301, '/keep/thing?k=v');
  });
});

describe('other codes and matching', () => {
  it('403, 410 and 418 go through the error pages', async () => {
    const forbidden = await get(s, '/forbidden.txt');
    assert.equal(forbidden.status, 403);
    assert.doesNotMatch(forbidden.text, /content of/);
    assert.equal((await get(s, '/gone/x')).status, 410);
    assert.equal((await get(s, '/teapot')).status, 418);
  });

  it('url is the exact path, without the query, case-sensitive, no prefix', async () => {
    assert.equal((await get(s, '/forbidden.txt?x=1')).status, 403);
    assert.equal((await get(s, '/Forbidden.txt')).status, 404);
    assert.equal((await get(s, '/forbidden.txt/x')).status, 404);
  });

  it('regex is searched in path and query; url applies when the regex does not match', async () => {
    assert.equal((await get(s, '/index.html?gone=1')).status, 410);
    assert.equal((await get(s, '/index.html?a=1&gone=1')).status, 410);
    assert.equal((await get(s, '/index.html?gone=10')).status, 200);
    assert.equal((await get(s, '/both.txt')).status, 403);
  });
});

describe('users: the entry applies only to the listed clients', () => {
  it('403 for clients in the list (CIDR, IPv6, single address), others pass', async () => {
    for (const client of ['10.1.2.3', '10.255.255.255', '2001:db8::5', '192.0.2.77']) {
      assert.equal((await get(s, '/ip-limited.txt', from(client))).status, 403, client);
    }
    for (const client of ['11.0.0.1', '192.0.2.78', '2001:db9::1']) {
      assert.equal((await get(s, '/ip-limited.txt', from(client))).status, 200, client);
    }
    assert.equal((await get(s, '/ip-limited.txt')).status, 200, 'the real client, 127.0.0.1');
  });

  it('401 asks only the listed clients to log in; everyone else bypasses it', async () => {
    assert.equal((await get(s, '/ip-auth.txt', from('192.0.2.9'))).status, 401);
    assert.equal(
      (await get(s, '/ip-auth.txt', from('192.0.2.9', { Authorization: basic('alice', ALICE) })))
        .status,
      200,
    );
    assert.equal((await get(s, '/ip-auth.txt', from('198.51.100.1'))).status, 200);
  });
});
